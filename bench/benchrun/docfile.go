package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The markers around the section benchrun owns in the document.
const (
	beginMarker = "<!-- scripts/bench:begin -->"
	endMarker   = "<!-- scripts/bench:end -->"
)

// writeSection replaces what lies between the markers in the file at path
// with body, or appends the markers and body when the file has none (or does
// not exist). Everything outside the markers is kept byte for byte.
func writeSection(path, body string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc, err := replaceSection(string(old), body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// replaceSection returns doc with the section between the markers set to body.
func replaceSection(doc, body string) (string, error) {
	section := beginMarker + "\n" + strings.TrimSpace(body) + "\n" + endMarker
	b := strings.Index(doc, beginMarker)
	e := strings.Index(doc, endMarker)
	switch {
	case b < 0 && e < 0:
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		if doc != "" {
			doc += "\n"
		}
		return doc + section + "\n", nil
	case b < 0 || e < b || strings.Count(doc, beginMarker) > 1 || strings.Count(doc, endMarker) > 1:
		return "", errors.New("the scripts/bench markers are unbalanced; fix them by hand")
	}
	return doc[:b] + section + doc[e+len(endMarker):], nil
}
