// Exports.swift
//
// The block, format, timestamp and consumer protocols live in JackHostTypes, a module with no
// dependencies, so that plugins can use them without linking libjack. Re-exported here so
// `import JackHost` still brings them, unchanged.
//
// The POSIX helpers (Lock, WorkerThread, writeAll, FileKind, text formatting, MonotonicClock)
// live in JackHostSupport, so that JackHostConsumers can use them without the core and its
// libjack. Re-exported too: the core's own files use them throughout, and so do the CLI, the
// signals, the plugin host and the tests, which have always had them from `import JackHost`;
// one re-export keeps every one of them compiling unchanged instead of adding an import to
// each. Its declarations are `package`, so nothing outside this package sees them either way.

@_exported import JackHostSupport
@_exported import JackHostTypes
