package faults_test

func zombieMain(func(string) string) error { return nil }
