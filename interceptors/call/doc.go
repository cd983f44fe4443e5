// Package call is the state one call shares among the layers of
// Portico's client chain, so no layer reads another's private context
// flag and no inner layer writes back through a call option. A State
// holds three facts:
//
//   - who owns the deadline that binds the call now (Owner): the
//     upstream (the chain's timeout, the edge's route deadline, or the
//     running attempt's own timeout) or the caller (a deadline it set
//     shorter than the upstream's). Only running out of the upstream's
//     deadline is the upstream's failure; CallerCaused applies the rule.
//     The deadline layer sets it, retry changes it for an attempt whose
//     own timeout comes first, breaker and eject read it.
//   - the attempt running, from 1 (retry sets it).
//   - the instance that took the last attempt, and whether that
//     instance's own breaker judged it (eject sets it, breaker reads it:
//     a failure an instance's breaker counted stays out of the
//     upstream's).
//
// The chain's top makes one State per call and puts it in the call's
// context (NewContext); every layer reaches it through From. A layer
// whose write another must read calls Ensure instead, so layers chained
// by hand, without the chain's top, still share one State. All methods
// of a nil *State are safe: readers see the zero value, writes are
// dropped (a call made outside a chain).
//
// The layers of a unary call run one after the other on the caller's
// goroutine, each calling the next synchronously (see package
// interceptors), so owner and attempt need no lock. A stream gets a State
// from its breaker layer (Ensure) for the instance alone: its setup is
// judged at the first message by the receiving goroutine while the
// breaker may decide at the context's end, so the instance's fields are
// safe for concurrent use.
package call
