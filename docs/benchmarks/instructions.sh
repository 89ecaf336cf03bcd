#!/bin/sh
# instructions.sh BINARY BENCH [N]: instructions per operation of the Go
# benchmark BENCH of a test binary (go test -c), from a run of N
# operations (default 20001) less a run of 1, counted by valgrind's
# cachegrind. Instruction counts do not depend on the machine's load, so
# two commits can be compared on a busy machine where ns/op cannot; run
# it with GOGC=off GOMAXPROCS=1 so that the garbage collector and the
# scheduler add no noise of their own.
#
#   GOGC=off GOMAXPROCS=1 docs/benchmarks/instructions.sh ./coord.test '^BenchmarkExecuteInsert$/^path=handle$'
#
# Anchor BENCH: 'ExecuteSelect/path=handle' also runs the setup of every
# benchmark whose name contains ExecuteSelect (ExecuteSelectTraced
# populates an engine of its own), whose background work then lands in
# the count.
b=$1; bench=$2; n=${3:-20001}
count() {
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$b" -test.run XXX -test.bench "$bench" -test.benchtime "$1"x 2>&1 |
		sed -n 's/.*I *refs: *//p' | tr -d ,
}
one=$(count 1)
many=$(count "$n")
echo "$b $bench: $(( (many - one) / (n - 1) )) instructions/op (runs of 1 and $n: $one, $many)"
