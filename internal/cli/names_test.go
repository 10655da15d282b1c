package cli

import (
	"strings"
	"testing"
)

// TestAppNames: app names are unique under case folding, Unicode
// confusable skeletons and digit/letter lookalikes, and the words that name
// the owner or the custodian are reserved; a refusal names the app the new
// name collides with. The owner's own registration still wins over pending
// self-registrations of lookalike names, which anyone could have squatted.
func TestAppNames(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "tutor", "secret": "secret-of-tutor-0123456789"}, nil)
	tests := []struct {
		name       string
		status     int
		constraint string
	}{
		{"Tutor", 409, "conflict"},
		{"TUTOR", 409, "conflict"},
		{"tut0r", 409, "conflict"},
		{"TUT0R", 409, "conflict"},
		{"tutor", 409, "conflict"},
		{"tutоr", 400, "invalid_request"}, // Cyrillic о: names are ASCII
		{"self", 400, "invalid_request"},
		{"SELF", 400, "invalid_request"},
		{"se1f", 400, "invalid_request"},
		{"owner", 400, "invalid_request"},
		{"0wner", 400, "invalid_request"},
		{"user", 400, "invalid_request"},
		{"custodian", 400, "invalid_request"},
		{"phc", 400, "invalid_request"},
		{"PHC", 400, "invalid_request"},
		{"tutors", 201, ""},
		{"mentor", 201, ""},
	}
	for _, tt := range tests {
		for _, route := range []struct{ path, token string }{{"/context/consumers/register", ""}, {"/phc/v1/consumers", h.owner}} {
			t.Run(tt.name+route.path, func(t *testing.T) {
				h := *h
				h.t = t
				body := map[string]string{"name": tt.name, "secret": "secret-of-squatter-0123456789"}
				if tt.status == 201 {
					if route.token != "" {
						body["name"] += "-x" // the first route took the name
					}
					h.must(201, "POST", route.path, route.token, body, nil)
					return
				}
				raw := h.constraint(tt.status, tt.constraint, "POST", route.path, route.token, body)
				if tt.status == 409 && !strings.Contains(string(raw), `\"tutor\"`) {
					t.Errorf("POST %s %q = %s; want the message to name \"tutor\"", route.path, tt.name, raw)
				}
			})
		}
	}

	// Squatted lookalikes of a name the owner then registers give way.
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "D1ary", "secret": "secret-of-squatter-0123456789"}, nil)
	h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "diarY", "secret": "secret-of-squatter-0123456789"})
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "diary", "secret": "secret-of-diary-0123456789"}, nil)
	var list struct {
		Consumers []struct{ Name, Status string }
	}
	h.must(200, "GET", "/context/consumers", h.owner, nil, &list)
	var names []string
	for _, c := range list.Consumers {
		names = append(names, c.Name+":"+c.Status)
	}
	if got, want := strings.Join(names, " "), "diary:approved mentor:pending mentor-x:approved tutor:approved tutors:pending tutors-x:approved"; got != want {
		t.Errorf("consumers = %s; want %s", got, want)
	}
	h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "DIARY", "secret": "secret-of-squatter-0123456789"})
}
