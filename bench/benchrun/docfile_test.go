package main

import "testing"

func TestReplaceSection(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"empty", "", beginMarker + "\nnew\n" + endMarker + "\n"},
		{"append", "# B\n\n## Other\ntext", "# B\n\n## Other\ntext\n\n" + beginMarker + "\nnew\n" + endMarker + "\n"},
		{"replace", "# B\n" + beginMarker + "\nold\n" + endMarker + "\n## After\nkept\n",
			"# B\n" + beginMarker + "\nnew\n" + endMarker + "\n## After\nkept\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := replaceSection(c.doc, "\nnew\n")
			if err != nil || got != c.want {
				t.Errorf("replaceSection = %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
	for _, doc := range []string{endMarker + beginMarker, beginMarker + "x", beginMarker + beginMarker + endMarker} {
		if _, err := replaceSection(doc, "new"); err == nil {
			t.Errorf("replaceSection(%q) accepted unbalanced markers", doc)
		}
	}
}
