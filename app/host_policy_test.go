package app

import "testing"

// TestSendRowsToModelDefault: result rows go to a model server on this
// computer by default and not to any other; an explicit setting wins.
func TestSendRowsToModelDefault(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	ws := openTemp(t)
	if !ws.SendRowsToModel() {
		t.Error("default loopback host: rows not sent")
	}
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "https://gpu.example.org" }); err != nil {
		t.Fatal(err)
	}
	if ws.SendRowsToModel() {
		t.Error("https host on the network: rows sent by default")
	}
	on := true
	if err := ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy.SendRows = &on }); err != nil {
		t.Fatal(err)
	}
	if !ws.SendRowsToModel() {
		t.Error("switch on: rows not sent")
	}
	t.Setenv(EnvOllamaHost, "127.0.0.1:11500")
	off := false
	if err := ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy.SendRows = &off }); err != nil {
		t.Fatal(err)
	}
	if ws.SendRowsToModel() {
		t.Error("switch off on loopback: rows sent")
	}
}
