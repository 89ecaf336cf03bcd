// Package jsudf runs the bodies of user-defined functions written in
// JavaScript (LANGUAGE javascript), as Cassandra 4.0 runs them in its
// script engine (ScriptBasedUDFunction), on github.com/dop251/goja.
//
// A body is a script, compiled once (Compile): its arguments are global
// variables named as the function's parameters and its result is the
// value of its last statement, so 'a + b' is a whole body. Every call runs
// in a runtime of its own, made for that call and dropped after it: a call
// sees its arguments and JavaScript's built-in objects and nothing else
// (no file, network, clock source beyond Date, module loader or console),
// and nothing one call leaves in its globals reaches the next, as each
// Cassandra call gets fresh script bindings. A call that runs past its
// fail timeout is interrupted and fails, and so is one during which the
// process's heap grows past a bound (read every few milliseconds once the
// call has run 10 ms, without stopping the world): the time limit alone
// lets a body that doubles a string reach gigabytes.
//
// Values cross as Cassandra's JavaScript UDFs see them, as near as
// JavaScript allows (Cassandra hands the script engine the Java driver's
// objects): text, ascii and varchar, uuid, timeuuid, inet and duration are
// strings; tinyint, smallint, int, bigint, counter, time, float, double
// and decimal are numbers (bigint kept exact as an integer within 2^53);
// varint is a BigInt; boolean is a boolean; timestamp and date are Date
// objects (a date at midnight UTC); blob is an ArrayBuffer; list and set
// are arrays, map a Map, tuple an array and a user type an object of its
// fields; null is null. A result is converted to the return type the way
// Cassandra converts a script's Number to the Java class of the return
// type (truncating to an integer type, wrapping on overflow), and the
// other values from the same forms, a string standing for any type CQL
// parses from text in JSON (a uuid, a timestamp, an inet, ...). A result
// of the wrong kind fails the call.
package jsudf
