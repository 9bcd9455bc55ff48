package components

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

const (
	testProject    = "acme-prod"
	testAgentEmail = "service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"
	testAgent      = "serviceAccount:" + testAgentEmail
)

// rec is one registered resource as the engine saw it.
type rec struct {
	typ, name, parent string
	custom            bool
	inputs            resource.PropertyMap
	deps              []string
	deletedWith       string
}

// mocks records every registered resource and answers with the outputs the
// provider computes (emails, names, URIs), and records any provider invoke
// (the components make none).
type mocks struct {
	mu    sync.Mutex
	res   []rec
	calls []string
}

func (m *mocks) NewResource(a pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	r := rec{typ: a.TypeToken, name: a.Name, custom: a.Custom, inputs: a.Inputs}
	if rpc := a.RegisterRPC; rpc != nil {
		r.parent, r.deps, r.deletedWith = rpc.GetParent(), rpc.GetDependencies(), rpc.GetDeletedWith()
	}
	m.mu.Lock()
	m.res = append(m.res, r)
	m.mu.Unlock()

	outs := a.Inputs.Copy()
	named := a.Name
	if v, ok := a.Inputs["name"]; ok && v.IsString() {
		named = v.StringValue()
	}
	id := a.Name + "-id"
	switch a.TypeToken {
	case "gcp:serviceaccount/account:Account":
		email := fmt.Sprintf("%s@%s.iam.gserviceaccount.com", a.Inputs["accountId"].StringValue(), testProject)
		outs["email"] = resource.NewProperty(email)
		outs["name"] = resource.NewProperty("projects/" + testProject + "/serviceAccounts/" + email)
	case "gcp:pubsub/topic:Topic":
		outs["name"] = resource.NewProperty(named)
		id = "projects/" + testProject + "/topics/" + named
	case "gcp:pubsub/subscription:Subscription":
		outs["name"] = resource.NewProperty(named)
		id = "projects/" + testProject + "/subscriptions/" + named
	case "gcp:cloudrunv2/service:Service":
		outs["name"] = resource.NewProperty(named)
		outs["uri"] = resource.NewProperty("https://" + named + "-abc123-ew.a.run.app")
	case "gcp:firestore/database:Database":
		outs["name"] = resource.NewProperty(named)
	case "gcp:projects/serviceIdentity:ServiceIdentity":
		outs["email"] = resource.NewProperty(testAgentEmail)
		outs["member"] = resource.NewProperty(testAgent)
	case "gcp:redis/instance:Instance":
		outs["host"] = resource.NewProperty("10.1.2.3")
		outs["port"] = resource.NewProperty(6378.0)
		outs["authString"] = resource.MakeSecret(resource.NewProperty("s3cret"))
	case "gcp:secretmanager/secret:Secret":
		outs["secretId"] = resource.NewProperty(a.Name)
		id = "projects/" + testProject + "/secrets/" + a.Name
	case "gcp:secretmanager/secretVersion:SecretVersion":
		outs["version"] = resource.NewProperty("1")
	case "gcp:logging/metric:Metric", "gcp:monitoring/alertPolicy:AlertPolicy":
		outs["name"] = resource.NewProperty(a.Name)
	}
	return id, outs, nil
}

func (m *mocks) Call(a pulumi.MockCallArgs) (resource.PropertyMap, error) {
	m.mu.Lock()
	m.calls = append(m.calls, a.Token)
	m.mu.Unlock()
	return a.Args, nil
}

// run runs body under the mocks and returns them with body's error.
func run(body pulumi.RunFunc) (*mocks, error) {
	m := &mocks{}
	err := pulumi.RunErr(body, pulumi.WithMocks("oncegate", "test", m))
	// Every write happened under the lock: taking it once orders them before
	// the test's reads.
	m.mu.Lock()
	defer m.mu.Unlock()
	return m, err
}

func (m *mocks) of(typ string) []rec {
	var out []rec
	for _, r := range m.res {
		if r.typ == typ {
			out = append(out, r)
		}
	}
	return out
}

// one returns the resource of type typ named name.
func (m *mocks) one(t *testing.T, typ, name string) rec {
	t.Helper()
	for _, r := range m.of(typ) {
		if r.name == name {
			return r
		}
	}
	var names []string
	for _, r := range m.res {
		names = append(names, r.typ+" "+r.name)
	}
	t.Fatalf("no %s named %q among:\n%s", typ, name, strings.Join(names, "\n"))
	return rec{}
}

// dependsOn reports whether r lists the resource named name among its
// dependencies.
func (m *mocks) dependsOn(t *testing.T, r rec, name string) bool {
	t.Helper()
	suffix := "::" + name
	for _, d := range r.deps {
		if strings.HasSuffix(d, suffix) {
			return true
		}
	}
	return false
}

// get walks a dotted path ("retryPolicy.minimumBackoff", "envs.2.value") in
// the inputs and returns the value, failing the test when it is absent.
func get(t *testing.T, r rec, path string) resource.PropertyValue {
	t.Helper()
	v := resource.NewProperty(r.inputs)
	for _, part := range strings.Split(path, ".") {
		switch {
		case v.IsObject():
			next, ok := v.ObjectValue()[resource.PropertyKey(part)]
			if !ok {
				t.Fatalf("%s %q: no %q in %v", r.typ, r.name, path, r.inputs)
			}
			v = next
		case v.IsArray():
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i >= len(v.ArrayValue()) {
				t.Fatalf("%s %q: bad index in %q", r.typ, r.name, path)
			}
			v = v.ArrayValue()[i]
		default:
			t.Fatalf("%s %q: %q walks into %v", r.typ, r.name, path, v)
		}
	}
	if v.IsSecret() {
		v = v.SecretValue().Element
	}
	return v
}

func str(t *testing.T, r rec, path string) string {
	t.Helper()
	v := get(t, r, path)
	if !v.IsString() {
		t.Fatalf("%s %q: %s = %v, not a string", r.typ, r.name, path, v)
	}
	return v.StringValue()
}

func num(t *testing.T, r rec, path string) int {
	t.Helper()
	v := get(t, r, path)
	if !v.IsNumber() {
		t.Fatalf("%s %q: %s = %v, not a number", r.typ, r.name, path, v)
	}
	return int(v.NumberValue())
}

func has(r rec, key string) bool {
	_, ok := r.inputs[resource.PropertyKey(key)]
	return ok
}

// wantStr fails the test unless the string at path equals want.
func wantStr(t *testing.T, r rec, path, want string) {
	t.Helper()
	if got := str(t, r, path); got != want {
		t.Errorf("%s %q: %s = %q, want %q", r.typ, r.name, path, got, want)
	}
}

// checkFamily fails the test unless every resource but the root is parented
// to a component and named from its parent's name.
func checkFamily(t *testing.T, m *mocks, root string) {
	t.Helper()
	for _, r := range m.res {
		if r.name == root {
			continue
		}
		i := strings.LastIndex(r.parent, "::")
		if r.parent == "" || i < 0 {
			t.Errorf("%s %q has no parent", r.typ, r.name)
			continue
		}
		if p := r.parent[i+2:]; !strings.HasPrefix(r.name, p+"-") {
			t.Errorf("%s %q is not named from its parent %q", r.typ, r.name, p)
		}
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
