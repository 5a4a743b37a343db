package app

// OpenWith opens the saved review project named name, saved as it
// changes, with the given options (the command line's --concurrency): Open
// with options.
func (rs *Reviews) OpenWith(name string, opts ReviewOptions) (*Review, error) {
	p, err := rs.ws.LoadReviewProject(name)
	if err != nil {
		return nil, err
	}
	return rs.open(p, opts, true), nil
}
