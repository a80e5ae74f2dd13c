import Logging

/// A logger that drops everything: the tests that damage files or fill disks
/// on purpose would otherwise print a warning per damaged file.
let quietLogger = Logger(label: "kache.reliability-tests") { _ in SwiftLogNoOpLogHandler() }
