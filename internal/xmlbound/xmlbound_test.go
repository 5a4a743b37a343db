package xmlbound

import (
	"encoding/xml"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func deep(n int) string {
	return "<root>\n" + strings.Repeat("<a>", n) + "x" + strings.Repeat("</a>", n) + "\n</root>"
}

// TestEveryReadIsBounded: Token, Skip and DecodeElement each stop at the
// first element deeper than the bound, with its line.
func TestEveryReadIsBounded(t *testing.T) {
	const n = 1_000_000
	reads := map[string]func(d *xml.Decoder) error{
		"Token": func(d *xml.Decoder) error {
			for {
				if _, err := d.Token(); err != nil {
					return err
				}
			}
		},
		"Skip": func(d *xml.Decoder) error {
			if _, err := d.Token(); err != nil { // <root>
				return err
			}
			return d.Skip()
		},
		"Decode": func(d *xml.Decoder) error {
			var v struct {
				A string `xml:"a"`
			}
			return d.Decode(&v)
		},
	}
	for name, read := range reads {
		raw := xml.NewDecoder(strings.NewReader(deep(n)))
		err := read(NewDecoder(raw, 0))
		var de *DepthError
		if !errors.As(err, &de) || de.Max != MaxDepth || de.Line != 2 || err.Error() != "the XML is nested more than 256 levels deep" {
			t.Errorf("%s: %v", name, err)
		}
		// It stopped there: most of the input is unread.
		if off := raw.InputOffset(); off > 64<<10 {
			t.Errorf("%s: read %d bytes", name, off)
		}
	}
	// At the bound exactly, all is read.
	d := NewDecoder(xml.NewDecoder(strings.NewReader(deep(MaxDepth-1))), 0)
	var v struct{}
	if err := d.Decode(&v); err != nil {
		t.Errorf("%d levels: %v", MaxDepth, err)
	}
}

// tokens returns the tokens of d, copied, until its end or error.
func tokens(d *xml.Decoder) ([]xml.Token, error) {
	var out []xml.Token
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, xml.CopyToken(tok))
	}
}

// TestSameTokens: within the bound, the tokens are the raw decoder's
// (names spaces, attributes, entities), strict or not, and errors too.
func TestSameTokens(t *testing.T) {
	docs := []string{
		`<?xml version="1.0"?><!DOCTYPE a><article xmlns:xlink="http://www.w3.org/1999/xlink" xmlns="urn:jats" xml:lang="en"><p>A &amp; b<!-- c --><ext-link xlink:href="https://x">l</ext-link><![CDATA[<raw>]]></p><mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>x</mml:mi></mml:math><e/></article>`,
		`<r><a><b>unclosed b</a><c>text &nbsp; here</c></r>`,
		`<r><a>x</b></r>`,
		`<r><a>`,
	}
	for _, doc := range docs {
		for _, strict := range []bool{true, false} {
			mk := func() *xml.Decoder {
				d := xml.NewDecoder(strings.NewReader(doc))
				d.Strict = strict
				d.Entity = xml.HTMLEntity
				return d
			}
			want, werr := tokens(mk())
			got, gerr := tokens(NewDecoder(mk(), 0))
			if !reflect.DeepEqual(got, want) || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("strict %v %s:\n got %v %v\nwant %v %v", strict, doc, got, gerr, want, werr)
			}
		}
	}
}
