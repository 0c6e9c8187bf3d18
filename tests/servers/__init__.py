"""Real servers on 127.0.0.1 that tests (and benchmarks) talk to."""
