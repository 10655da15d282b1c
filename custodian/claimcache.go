package custodian

// The claim cache is the engine's (see engine.Cache): the core gives it
// how to read a claim's versions from the store and what a head weighs.
