package whatif

import "github.com/pebble-cuckoo/pebble-cuckoo/cuckoopolicy/plan"

// What the external tests read of a report: they are package whatif_test
// so that they may import the workload package, which imports this one.

// PlanFit returns the plan section's plan.Fit report, whose Plan is the
// plan the report prints and whose FalsePositives are its projected
// false-positive reads per absent lookup; false without a plan section.
func PlanFit(r *Report) (plan.Report, bool) {
	if r.plan == nil {
		return plan.Report{}, false
	}
	return r.plan.Fit, true
}

// Footing returns what the report makes of its model beside Pebble's
// measurement of the current filters: its kind (confirmed, modelOff, ...),
// the model's and Pebble's figures for the current filters, and the plan's
// projection as the verdict takes it (as modelled and, where the model is
// off, scaled by its error: the smaller first).
func Footing(r *Report) (kind string, model, measured float64, projection [2]float64) {
	f := r.footing()
	return kindNames[f.kind], f.model, f.measured, f.plan
}
