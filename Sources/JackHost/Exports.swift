// Exports.swift
//
// The block, format, timestamp and consumer protocols live in JackHostTypes, a module with no
// dependencies, so that plugins can use them without linking libjack. Re-exported here so
// `import JackHost` still brings them, unchanged.

@_exported import JackHostTypes
