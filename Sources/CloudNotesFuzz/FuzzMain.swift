import Foundation

// MARK: - Entry point

/// The message-path fuzzer.
///
/// Built for fuzzing (`scripts/fuzz`, which compiles with `-sanitize=fuzzer,address -DFUZZING`), it
/// hands control to libFuzzer. Built normally, it replays the files it is given, which is how the test
/// suite runs the seed and regression corpora on every run.
@main
struct CloudNotesFuzz {
    static func main() {
        signal(SIGPIPE, SIG_IGN)  // a server that exits early leaves the harness writing to a closed pipe
        #if FUZZING
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        let files = CommandLine.arguments.dropFirst()
        guard !files.isEmpty else {
            FileHandle.standardError.write(Data("usage: CloudNotesFuzz FILE...  (replays inputs; scripts/fuzz fuzzes)\n".utf8))
            exit(2)
        }
        for file in files {
            guard let input = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                exit(2)
            }
            // Each input in both framings: as JSON lines, and each line as a Content-Length body.
            MessagePathHarness.run(input)
            MessagePathHarness.run(input, framing: .contentLength)
        }
        print("replayed \(files.count) inputs: every invariant held")
        #endif
    }
}

#if FUZZING
/// libFuzzer's entry for one input (its runtime refers to this name even when the driver is called directly).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = size == 0 ? Data() : Data(bytes: data!, count: size)
    // Half the inputs raw after a Content-Length preamble, where the header parser meets them.
    if size % 2 == 0 {
        MessagePathHarness.run(input)
    } else {
        MessagePathHarness.run(input, framing: .contentLength, framingEachLine: false)
    }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
