package push

// HeaderOutcome is the response header that names the outcome of every answer
// (gate.Outcome's String: "ran", "duplicate", "in-progress", …, or a refusal
// such as "malformed"), for relays, tests and request logs. The status, the
// ack and the log level of each come from the ack table in package gate
// (gate.Outcome's HTTPStatus, Ack and LogLevel; docs/design.md, "The ack
// table").
const HeaderOutcome = "X-Oncegate-Outcome"
