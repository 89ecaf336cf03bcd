// Package lincheck checks that lightweight transactions are linearizable:
// a workload of concurrent clients runs conditional writes and SERIAL
// reads on a few registers (one partition each) of a system under test,
// every operation is recorded with its call and return time (History),
// and porcupine searches for a sequential order that explains every
// answer (Check), one register at a time (Model partitions the history by
// key). A fault schedule drawn from a seed (Schedule) kills, pauses and
// isolates nodes while the clients run, through an Injector the test
// provides.
//
// What an answer proves (Outcome):
//
//   - Definite: the operation took effect, or did not, as its answer
//     says; a write that was not applied reports the current value, which
//     the model checks as a read.
//   - Indefinite (a timeout, a lost connection): the operation may or may
//     not have taken effect, at any time after its call. It is recorded as
//     returning after every other operation, as Jepsen and porcupine's own
//     etcd test do, so the checker may place it anywhere after its call —
//     or last, where it changes nothing. An indefinite read proves
//     nothing and is dropped.
//   - Refused (UNAVAILABLE): the operation did not take effect; it is
//     dropped.
//
// Written values are unique (the client's number and a sequence), so a
// stale or lost write cannot hide behind an equal value. A client whose
// operation ended indefinitely continues as a new process (a new client
// id in the visualization), since the old one may still be running.
//
// The package knows nothing of cqld: Client is one connection to the
// system under test (NewGocqlClient is the real one), Injector the
// faults. Its unit tests run the whole pipeline against in-memory
// registers, a correct one and deliberately broken ones, so a checker
// that could not fail would fail them.
package lincheck
