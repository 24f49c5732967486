//go:build !purego

#include "textflag.h"

// func prefetch(base unsafe.Pointer, idx *uint32, n int, stride int)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVD base+0(FP), R0
	MOVD idx+8(FP), R1
	MOVD n+16(FP), R2
	MOVD stride+24(FP), R3
	CMP  $0, R2
	BLE  done

loop:
	MOVWU (R1), R4
	ADD   $4, R1
	MUL   R3, R4, R4
	ADD   R0, R4, R4
	PRFM  (R4), PLDL1KEEP
	SUBS  $1, R2, R2
	BNE   loop

done:
	RET
