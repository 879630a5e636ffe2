package dump

import "github.com/logtool/logtool/internal/target"

// Choose decides between the summary and the content of a dump of set, and
// gives the summary of directories their topics' cleanup policies. summary
// is what the user asked (nil: nothing); content says that a flag asked for
// the content of files, which a summary table would not show. The error is
// Policies', without which the dump goes on.
func (o *Options) Choose(set *target.Set, summary *bool, content bool) error {
	anyDir, anyLogDir := false, false
	for _, it := range set.Items {
		anyDir = anyDir || it.File == nil
		anyLogDir = anyLogDir || it.Root != nil
	}
	if summary != nil {
		o.SummaryOnly = *summary
	} else {
		// A log directory holds too much to print whole by default.
		o.SummaryOnly = !o.JSON && anyLogDir && !content
	}
	// Kafka's index checks print only their findings; a table would add
	// nothing.
	o.Summary = (o.SummaryOnly || anyDir) && !o.VerifyIndexOnly && !o.IndexSanityCheck
	if !o.Summary || !anyDir {
		return nil
	}
	var err error
	o.Policy, err = Policies(set)
	return err
}
