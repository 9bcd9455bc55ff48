package cloudevent_test

import (
	"context"
	"errors"

	"google.golang.org/api/idtoken"
)

type rejectAll struct{}

func (rejectAll) Validate(context.Context, string, string) (*idtoken.Payload, error) {
	return nil, errors.New("invalid signature")
}
