import CastModel
import CommandParsing
import Foundation
import MediaProbe

/// Prints diagnostics to stderr the way compilers do, with a one-line summary.
struct DiagnosticPrinter {
    let io: CommandIO
    let colored: Bool

    init(io: CommandIO, colorMode: ColorMode) {
        self.io = io
        self.colored = io.colorEnabled(for: .standardError, mode: colorMode)
    }

    func print(_ diagnostics: [Diagnostic]) {
        guard !diagnostics.isEmpty else { return }
        var text = ""
        for diagnostic in diagnostics.sortedForDisplay() {
            text += diagnostic.rendered(colored: colored)
            text += "\n"
        }
        io.writeError(text)
    }

    /// "2 errors, 1 warning" (nothing when there are none).
    static func tally(_ diagnostics: [Diagnostic]) -> String {
        tally(
            errors: diagnostics.filter { $0.severity == .error }.count,
            warnings: diagnostics.filter { $0.severity == .warning }.count,
            notes: diagnostics.filter { $0.severity == .note }.count)
    }

    /// "2 errors, 1 warning" from the counts.
    static func tally(errors: Int, warnings: Int, notes: Int) -> String {
        var parts: [String] = []
        parts.append("\(errors) error\(errors == 1 ? "" : "s")")
        parts.append("\(warnings) warning\(warnings == 1 ? "" : "s")")
        if notes > 0 { parts.append("\(notes) note\(notes == 1 ? "" : "s")") }
        return parts.joined(separator: ", ")
    }
}

/// Options every command that prints diagnostics shares.
enum CommonOptions {
    static let color = OptionSpec.option(
        "color", valueName: "when",
        help: "Colour diagnostics: auto (on a terminal, unless NO_COLOR is set), always or never.",
        allowedValues: ColorMode.allCases.map(\.rawValue), default: "auto")

    /// `--repeat off|all|one|shuffle` as the queue's repeat mode.
    static func repeatMode(_ values: ParsedValues) -> RepeatMode? {
        switch values.option("repeat") {
        case "off": .off
        case "all": .all
        case "one": .single
        case "shuffle": .allAndShuffle
        default: nil
        }
    }

    static func colorMode(_ values: ParsedValues) -> ColorMode {
        values.option("color").flatMap(ColorMode.init(rawValue:)) ?? .auto
    }

    /// The device profiles `--devices` names (comma-separated ids, and `none` for no device
    /// where `allowsNone`); every profile when it is not given.
    ///
    /// - Throws: ``UsageError`` naming the first unknown profile and the known ones.
    static func deviceProfiles(_ values: ParsedValues, allowsNone: Bool = false) throws(UsageError) -> [DeviceProfile] {
        guard let list = values.option("devices") else { return DeviceProfile.all }
        if allowsNone, list == "none" { return [] }
        let (selected, unknown) = DeviceProfile.select(
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        if let first = unknown.first {
            throw values.usageError(
                "unknown device profile '\(first)'; known: \(DeviceProfile.all.map(\.id).joined(separator: ", "))",
                concerning: "devices")
        }
        return selected
    }
}
