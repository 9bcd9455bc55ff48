package idemhttp

import (
	"bytes"
	"net/http"
)

// recorder buffers a handler's response so it can be stored before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// statusOrOK is the status written, 200 when the handler wrote none.
func (r *recorder) statusOrOK() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *recorder) stored(keep []string) stored {
	s := stored{Status: r.status, Body: bytes.Clone(r.body.Bytes()), Header: map[string][]string{}}
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	for _, k := range keep {
		if v := r.header.Values(k); len(v) > 0 {
			s.Header[http.CanonicalHeaderKey(k)] = v
		}
	}
	return s
}

// flush sends the buffered response as the handler wrote it.
func (r *recorder) flush(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
