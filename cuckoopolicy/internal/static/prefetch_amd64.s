//go:build !purego

#include "textflag.h"

// func prefetch(base unsafe.Pointer, idx *uint32, n int, stride int)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), SI
	TESTQ CX, CX
	JLE done

loop:
	MOVL (BX), DX
	IMULQ SI, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, BX
	DECQ CX
	JNZ loop

done:
	RET
