package sqlgate

// WithoutReturning makes s claim on MySQL/MariaDB as on a server without INSERT
// … RETURNING, so the tests run the two-statement path on MariaDB too.
func WithoutReturning(s *Store) { s.returning.Store(returningNo) }

// MariaDBAtLeast is mariaDBAtLeast, for the version table test.
var MariaDBAtLeast = mariaDBAtLeast
