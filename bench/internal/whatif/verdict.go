package whatif

import (
	"fmt"
	"strings"
	"text/template"
)

// negligible is the fewest expected false-positive reads per absent lookup
// that a ratio is taken of: below it, a ratio says nothing, and the figures
// are given instead.
const negligible = 1e-7

// modelTolerance is how far plan.Fit's figure for the current filters may
// be from Pebble's measurement of them for the model's projections to stand
// as they are: within [1/modelTolerance, modelTolerance] of it.
const modelTolerance = 1.3

// switchMargin is the factor by which the plan's projection must be below
// the current filters' measured figure for the decision to switch.
const switchMargin = 1.3

// footingKind says what the measurement through Pebble makes of plan.Fit's
// figure for the current filters.
type footingKind int

const (
	unknownNow   footingKind = iota // the model does not know the current filters
	unmeasured                      // no absent lookup was measured
	nothingMet                      // the lookups met no table on the levels they load
	noneMeasured                    // the lookups met no read in vain
	modelNone                       // the model expects none; Pebble measured some
	confirmed                       // within modelTolerance of the measurement
	modelOff                        // outside it: the projections are scaled
)

// footing is the plan's projection set beside the current filters as Pebble
// measured them.
type footing struct {
	kind     footingKind
	model    float64 // plan.Fit's figure for the current filters
	measured float64 // Pebble's, reads in vain per absent lookup
	lo, hi   float64 // its 95% interval
	err      float64 // model/measured; 0 where nothing was measured
	// plan is the plan's projection: as modelled, and where the model is off,
	// also scaled by its error (divided by err); the smaller first, equal
	// where not scaled. The decision takes the larger.
	plan [2]float64
}

// footing returns the plan's projection on the measurement's footing.
func (r *Report) footing() footing {
	pr := r.plan
	p := pr.Fit.FalsePositives
	f := footing{model: pr.Fit.Current.FalsePositives, plan: [2]float64{p, p}}
	m := pr.Measured
	if m != nil && m.Lookups > 0 {
		f.measured = m.perLookup()
		f.lo, f.hi = m.interval()
	}
	switch {
	case !r.currentKnown():
		f.kind = unknownNow
	case m == nil || m.Lookups == 0:
		f.kind = unmeasured
	case m.met() == 0:
		f.kind = nothingMet
	case m.reads() == 0:
		f.kind = noneMeasured
	case f.model < negligible:
		f.kind = modelNone
	default:
		f.err = f.model / f.measured
		f.kind = confirmed
		if f.err > modelTolerance || f.err < 1/modelTolerance {
			f.kind = modelOff
			scaled := p / f.err
			f.plan = [2]float64{min(p, scaled), max(p, scaled)}
		}
	}
	return f
}

// switches reports whether the decision is to switch: the plan's projection
// (the larger, where it is scaled) is below the current filters' measured
// figure by switchMargin, and below its 95% interval.
func (f footing) switches() bool {
	if f.kind != confirmed && f.kind != modelOff {
		return false
	}
	worst := f.plan[1]
	return worst*switchMargin <= f.measured && worst < f.lo
}

// verdictTemplates hold the verdict's clause on the current filters and the
// decision's reason, by footing kind; their data is verdictData.
var verdictTemplates = template.Must(template.New("verdict").Parse(`
{{- define "now-unknown"}}; plan.Fit's model does not know the current filters
{{- if .Lookups}}, which Pebble measured at {{.Measured}} false-positive reads per absent lookup (95%: {{.Lo}} to {{.Hi}}){{end}}{{end}}
{{- define "now-unmeasured"}}{{.ByModel}}; no absent lookup was measured through Pebble{{end}}
{{- define "now-nothingMet"}}; the {{.Lookups}} absent lookups measured through Pebble met no table on the levels they load,
{{- ""}} where the model says {{.Model}}{{end}}
{{- define "now-noneMeasured"}}; Pebble measured no false-positive read of the current filters in {{.Lookups}} absent lookups
{{- ""}} (95%: at most {{.Hi}} per lookup), where the model says {{.Model}}{{end}}
{{- define "now-modelNone"}}; plan.Fit's model expects no false positives of the current filters, where Pebble measured
{{- ""}} {{.Measured}} per absent lookup (95%: {{.Lo}} to {{.Hi}}){{end}}
{{- define "now-confirmed"}}, and against the current filters, which Pebble measured at {{.Measured}} false-positive reads
{{- ""}} per absent lookup (95%: {{.Lo}} to {{.Hi}}; the model's {{.Model}} is within {{.Tolerance}} of it),
{{- ""}} its projected {{.Plan}} is {{.RatioHi}} theirs{{end}}
{{- define "now-modelOff"}}; but Pebble measured the current filters at {{.Measured}} false-positive reads per absent lookup
{{- ""}} (95%: {{.Lo}} to {{.Hi}}), where the model says {{.Model}} ({{.Err}} the measurement), so the plan's projection
{{- ""}} is taken both as modelled and scaled by that error: {{.PlanLo}} to {{.PlanHi}}, {{.RatioLo}} to {{.RatioHi}}
{{- ""}} the current filters' measured figure{{end}}

{{- define "why-unknown"}}plan.Fit's model does not know them, so the plan's projection has no footing to be checked against.{{end}}
{{- define "why-unmeasured"}}no absent lookup could be measured through Pebble, so the model's figures are unchecked.{{end}}
{{- define "why-nothingMet"}}the absent lookups met no table on the levels they load, so there is nothing measurable to save.{{end}}
{{- define "why-noneMeasured"}}they met no false-positive read in {{.Lookups}} absent lookups, which leaves nothing measurable to save.{{end}}
{{- define "why-modelNone"}}plan.Fit's model expects none of the false positives Pebble measured on them, so its projections cannot be corrected.{{end}}
{{- define "why-switch"}}the plan's projected {{.Worst}} false-positive reads per absent lookup{{.Scaled}} {{.Bytes}} are below
{{- ""}} 1/{{.Margin}} of the current filters' measured {{.Measured}} and below its 95% interval ({{.Lo}} to {{.Hi}}).{{end}}
{{- define "why-stay"}}the plan's projected {{.Worst}} false-positive reads per absent lookup{{.Scaled}} {{.Bytes}} are not below
{{- ""}} both 1/{{.Margin}} of the current filters' measured {{.Measured}} and its 95% interval ({{.Lo}} to {{.Hi}}).{{end}}
`))

// verdictData is what the templates print, every figure formatted.
type verdictData struct {
	Lookups                      string // "" where nothing was measured
	Measured, Lo, Hi, Model, Err string
	Plan, PlanLo, PlanHi, Worst  string
	RatioLo, RatioHi             string // the plan's projection over the measured figure
	ByModel, Scaled, Bytes       string
	Tolerance, Margin            string
}

// data formats f and the plan section's figures for the templates.
func (r *Report) data(f footing) verdictData {
	pr := r.plan
	d := verdictData{
		Measured: fpText(f.measured), Lo: fpText(f.lo), Hi: fpText(f.hi), Model: fpText(f.model),
		Plan: fpText(f.plan[0]), PlanLo: fpText(f.plan[0]), PlanHi: fpText(f.plan[1]), Worst: fpText(f.plan[1]),
		RatioLo: timesText(f.plan[0], f.measured), RatioHi: timesText(f.plan[1], f.measured),
		Tolerance: fmt.Sprintf("%gx", modelTolerance), Margin: fmt.Sprintf("%g", switchMargin),
		Bytes: "at the current filters' bytes",
	}
	if f.err > 0 {
		d.Err = ratioText(f.model, f.measured)
	}
	if m := pr.Measured; m != nil && m.Lookups > 0 {
		d.Lookups = num(uint64(m.Lookups))
	}
	if f.kind == modelOff {
		d.Scaled = " (the larger of the model's figure and that scaled by its measured error)"
	}
	if c := pr.Fit.Current.Bytes; c != pr.Memory {
		d.Bytes = fmt.Sprintf("within %s of filters (the current filters take %s)", shortSize(pr.Memory), shortSize(c))
	}
	d.ByModel = r.byModel()
	return d
}

// execute runs the named template on d.
func execute(name string, d verdictData) string {
	var b strings.Builder
	if err := verdictTemplates.ExecuteTemplate(&b, name, d); err != nil {
		panic(err) // the templates are constants: a programming error
	}
	return b.String()
}

var kindNames = [...]string{unknownNow: "unknown", unmeasured: "unmeasured", nothingMet: "nothingMet", noneMeasured: "noneMeasured",
	modelNone: "modelNone", confirmed: "confirmed", modelOff: "modelOff"}

// verdict returns the section's verdict line: the plan against the best
// bloom-only plan by plan.Fit's model, in ratios where both figures are more
// than negligible, in absolute figures where one is not; and against the
// current filters as Pebble measured them, the plan's projection scaled
// where the model's figure for them is off (see footing).
func (r *Report) verdict() string {
	pr := r.plan
	fit := &pr.Fit
	p, bo := fit.FalsePositives, fit.BloomOnly.FalsePositives
	var vsBloom string
	switch {
	case fit.Plan == fit.BloomOnly.Plan:
		vsBloom = "the plan is the best bloom-only plan (the cuckoo filter gains nothing here)"
	case p < negligible || bo < negligible:
		vsBloom = fmt.Sprintf("the plan meets %s false-positive reads per absent lookup, the best bloom-only plan %s", fpText(p), fpText(bo))
	case p < bo:
		vsBloom = fmt.Sprintf("the plan meets %s the false positives of the best bloom-only plan", ratioText(p, bo))
	default:
		vsBloom = fmt.Sprintf("the plan is no better than the best bloom-only plan (%s its false positives)", ratioText(p, bo))
	}
	f := r.footing()
	vsNow := execute("now-"+kindNames[f.kind], r.data(f))
	if r.currentKnown() && fit.Current.Bytes != pr.Memory {
		vsNow += fmt.Sprintf(" (the current filters take %s)", shortSize(fit.Current.Bytes))
	}
	return fmt.Sprintf("Verdict: at the same %s of filters the lookups load, %s%s.", shortSize(pr.Memory), vsBloom, vsNow)
}

// byModel is the verdict's clause on the current filters by plan.Fit's model
// alone.
func (r *Report) byModel() string {
	p, c := r.plan.Fit.FalsePositives, r.plan.Fit.Current.FalsePositives
	if p < negligible || c < negligible {
		return fmt.Sprintf(", and the current filters %s", fpText(c))
	}
	return fmt.Sprintf(", and %s those of the current filters", ratioText(p, c))
}

// decision returns the section's last line: switch to the plan or stay with
// the current filters, and why, in one sentence.
func (r *Report) decision() string {
	f := r.footing()
	d := r.data(f)
	switch {
	case f.switches():
		return "Decision: switch to this plan: " + execute("why-switch", d)
	case f.kind == confirmed || f.kind == modelOff:
		return "Decision: stay with the current filters: " + execute("why-stay", d)
	}
	return "Decision: stay with the current filters: " + execute("why-"+kindNames[f.kind], d)
}

// timesText returns v as a multiple of of, "a negligible share of" where v
// is negligible.
func timesText(v, of float64) string {
	if v < negligible {
		return "a negligible share of"
	}
	return ratioText(v, of)
}
