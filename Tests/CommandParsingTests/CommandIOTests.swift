import CommandParsing
import Testing

/// One row of the colour decision table.
struct ColorCase: Sendable, CustomTestStringConvertible {
    var mode: ColorMode
    var isTerminal: Bool
    var environment: [String: String]
    var expected: Bool
    var testDescription: String {
        "\(mode), \(isTerminal ? "terminal" : "pipe"), \(environment.sorted { $0.key < $1.key }) → \(expected)"
    }
}

@Suite("Terminal input and output")
struct CommandIOTests {
    @Test(
        "colour follows the mode, the terminal, TERM and NO_COLOR",
        arguments: [
            ColorCase(mode: .auto, isTerminal: true, environment: [:], expected: true),
            ColorCase(mode: .auto, isTerminal: false, environment: [:], expected: false),
            ColorCase(mode: .auto, isTerminal: true, environment: ["NO_COLOR": "1"], expected: false),
            ColorCase(mode: .auto, isTerminal: true, environment: ["NO_COLOR": ""], expected: true),
            ColorCase(mode: .auto, isTerminal: true, environment: ["TERM": "dumb"], expected: false),
            ColorCase(mode: .auto, isTerminal: true, environment: ["TERM": "xterm-256color"], expected: true),
            ColorCase(mode: .auto, isTerminal: false, environment: ["TERM": "xterm-256color"], expected: false),
            ColorCase(
                mode: .always, isTerminal: false, environment: ["NO_COLOR": "1", "TERM": "dumb"], expected: true),
            ColorCase(mode: .always, isTerminal: true, environment: [:], expected: true),
            ColorCase(mode: .never, isTerminal: true, environment: [:], expected: false),
            ColorCase(mode: .never, isTerminal: false, environment: [:], expected: false),
        ])
    func colorDecision(_ row: ColorCase) {
        let onStdout = CommandIO.capturing(environment: row.environment, stdoutIsTerminal: row.isTerminal)
        #expect(onStdout.colorEnabled(for: .standardOutput, mode: row.mode) == row.expected)
        let onStderr = CommandIO.capturing(environment: row.environment, stderrIsTerminal: row.isTerminal)
        #expect(onStderr.colorEnabled(for: .standardError, mode: row.mode) == row.expected)
    }

    @Test("each stream's colour depends on whether that stream is a terminal")
    func streamsDecideSeparately() {
        let io = CommandIO.capturing(stdoutIsTerminal: false, stderrIsTerminal: true)
        #expect(!io.colorEnabled(for: .standardOutput, mode: .auto))
        #expect(io.colorEnabled(for: .standardError, mode: .auto))
    }

    @Test("colour modes read from their option values")
    func colorModeNames() {
        #expect(ColorMode(rawValue: "auto") == .auto)
        #expect(ColorMode(rawValue: "always") == .always)
        #expect(ColorMode(rawValue: "never") == .never)
        #expect(ColorMode.allCases.map(\.rawValue) == ["auto", "always", "never"])
    }

    @Test(
        "terminal width comes from COLUMNS, else 80",
        arguments: [
            ([:], 80), (["COLUMNS": "120"], 120), (["COLUMNS": "abc"], 80), (["COLUMNS": "0"], 80),
            (["COLUMNS": "-3"], 80),
        ])
    func terminalWidth(environment: [String: String], expected: Int) {
        #expect(CommandIO.capturing(environment: environment).terminalWidth == expected)
    }

    @Test("capturing keeps stdout and stderr apart and adds newlines only when asked")
    func capturing() {
        let io = CommandIO.capturing(environment: ["A": "b"], stdoutIsTerminal: true)
        io.write("one")
        io.writeLine(" two")
        io.writeError("warn")
        io.writeErrorLine("ing")
        #expect(io.capturedOutput == "one two\n")
        #expect(io.capturedError == "warning\n")
        #expect(io.environment == ["A": "b"])
        #expect(io.stdoutIsTerminal)
        #expect(!io.stderrIsTerminal)
    }

    @Test("bulk UTF-8 output, from an array or from memory the caller owns, arrives as written")
    func bulkBytes() {
        let io = CommandIO.capturing()
        io.write(utf8: Array("{\"a\":1}\n".utf8))
        let text = Array("{\"title\":\"Été\"}\n".utf8)
        text.withUnsafeBufferPointer { io.write(utf8: $0) }
        io.write(utf8: [UInt8]())
        #expect(io.capturedOutput == "{\"a\":1}\n{\"title\":\"Été\"}\n")
        #expect(io.capturedError.isEmpty)
    }

    @Test("concurrent writes never interleave within a line")
    func concurrentWrites() async {
        let io = CommandIO.capturing()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<20 {
                group.addTask {
                    for line in 0..<50 { io.writeLine("task \(task) line \(line)") }
                }
            }
        }
        let lines = io.capturedOutput.split(separator: "\n")
        #expect(lines.count == 1000)
        #expect(lines.allSatisfy { $0.hasPrefix("task ") && $0.split(separator: " ").count == 4 })
    }

    @Test("the standard streams capture nothing and see the process environment")
    func standard() {
        let io = CommandIO.standard()
        #expect(io.capturedOutput == "")
        #expect(io.capturedError == "")
        #expect(io.terminalWidth > 0)
    }
}
