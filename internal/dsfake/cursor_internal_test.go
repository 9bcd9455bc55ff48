package dsfake

import (
	"testing"
	"unicode/utf8"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
)

// FuzzDecodeCursor: a client-supplied cursor never panics the fake, and a cursor
// the fake made decodes to the position it encodes.
func FuzzDecodeCursor(f *testing.F) {
	f.Add([]byte("dsfake1:"), int64(3), "s")
	f.Add([]byte("junk"), int64(0), "")
	f.Fuzz(func(t *testing.T, raw []byte, n int64, s string) {
		_, _ = decodeCursor(raw, 2)
		pos := []*pb.Value{
			{ValueType: &pb.Value_IntegerValue{IntegerValue: n}},
			{ValueType: &pb.Value_StringValue{StringValue: s}},
		}
		got, err := decodeCursor(encodeCursor(pos), 2)
		if err != nil {
			if !utf8.ValidString(s) {
				return // proto refuses invalid UTF-8 strings
			}
			t.Fatal(err)
		}
		if comparePos(got, pos, []order{{}, {}}) != 0 {
			t.Fatalf("cursor round trip: got %v, want %v", got, pos)
		}
	})
}
