// libFuzzer target for the entry-file decoder (EntryFile.decode, EntryFile.decodeHeader).
// Built and run by scripts/fuzz.sh; compiled together with
// Tests/KacheReliabilityTests/Fuzzing/DecoderProperties.swift against a
// fuzzer-instrumented build of the Kache module.

/// Feeds one input to the decoder(s) through `DecoderProperties` (as it is,
/// and resealed with a valid checksum). Traps on any broken property, which
/// libFuzzer reports as a crash and saves.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntryFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let violations = DecoderProperties.entryFileInputViolations(UnsafeRawBufferPointer(start: data, count: size))
    if let first = violations.first { fatalError("entry-file property broken: \(first)") }
    return 0
}

