package ui

import "github.com/clinsight/clinsight/app"

// The host policy of fakeSettings: described by the app's own rules from
// its configuration (no files are read, no token is checked).

func (f *fakeSettings) HostState() app.HostState {
	h, _ := f.ModelHost()
	return app.DescribeHost(f.Config().ModelHostPolicy, h)
}

func (f *fakeSettings) SetHostChoices(ch app.HostChoices) error {
	h, _ := f.ModelHost()
	return f.UpdateConfig(func(c *app.Config) {
		c.ModelHostPolicy = app.HostPolicy{TokenFile: ch.TokenFile, TokenEnv: ch.TokenEnv, CAFile: ch.CAFile, SendRows: &ch.SendRows}
		if ch.AllowPlainHTTP {
			c.ModelHostPolicy.AllowPlainHTTP = h.URL
		}
	})
}
