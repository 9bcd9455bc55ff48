package push

import "fmt"

// AttributeKey returns a KeyFunc that takes the key from the message attribute
// name: a business key (an order number, say), so a message republished under a
// new message id is still one piece of work. A message without the attribute, or
// with it empty, has no resolvable key and fails closed. The name is matched as
// Message.Attribute matches it: exactly in a wrapped push, case-insensitively in
// an unwrapped one (attributes arrive as HTTP headers). runtime/pull uses the
// same KeyFunc for pull subscribers.
func AttributeKey(name string) KeyFunc {
	return func(m *Message) (string, error) {
		if k, _ := m.Attribute(name); k != "" {
			return k, nil
		}
		return "", fmt.Errorf("message %s has no %q attribute", m.MessageID, name)
	}
}
