// Exports.swift
//
// The private server and the signal generator live in JackHostSignals, which the shipping
// binary links; what only tests need lives here. Re-exported (the underscored attribute, as in
// JackHost's Exports.swift) so that `import JackHostTesting` still brings both, unchanged.

@_exported import JackHostSignals
