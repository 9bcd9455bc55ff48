package pull

import (
	"cloud.google.com/go/pubsub/v2"

	"github.com/oncegate/oncegate/sizing"
)

// ReceiveSettings returns the client settings plan p describes (defaults
// applied): MaxExtension, MaxDurationPerAckExtension (MaxExtensionPeriod),
// MaxOutstandingMessages, and ShutdownOptions that wait for processing past the
// drain plus the release and the ack, so the client never gives up on a message
// whose body is finishing. Other fields keep DefaultReceiveSettings. Validate p
// first (sizing.PullPlan.Validate).
func ReceiveSettings(p sizing.PullPlan) pubsub.ReceiveSettings {
	r := p.WithDefaults()
	s := pubsub.DefaultReceiveSettings
	s.MaxExtension = r.MaxExtension
	s.MaxDurationPerAckExtension = r.MaxExtensionPeriod
	s.MaxOutstandingMessages = r.MaxOutstandingMessages
	s.ShutdownOptions = &pubsub.ShutdownOptions{
		Behavior: pubsub.ShutdownBehaviorWaitForProcessing,
		Timeout:  r.Drain + 2*r.StoreTimeout,
	}
	return s
}

// OptionsFor returns the Receiver options plan p implies (Drain, AckTimeout);
// set Mode, KeyFunc and the rest on the result.
func OptionsFor(p sizing.PullPlan) *Options {
	r := p.WithDefaults()
	return &Options{Drain: r.Drain, AckTimeout: r.StoreTimeout}
}
