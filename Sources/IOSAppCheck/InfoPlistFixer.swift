public import CastModel
import Foundation

/// What `--fix` did to one Info.plist.
public struct InfoPlistFixResult: Sendable, Hashable {
    public var path: String
    public var format: PropertyListFormat
    /// The members set, in order.
    public var keys: [String]
    /// Where the original is kept (`PATH.orig`), when the file was written.
    public var backupPath: String?
    /// Why nothing was written, when it was not.
    public var refusal: Diagnostic?

    public var isWritten: Bool { refusal == nil && backupPath != nil }
}

/// Writes the Info.plist members a check asked for, in the file's own format, changing
/// nothing else.
///
/// XML files are edited as text: the value of each member is replaced where it is, or the
/// member is added before the root `</dict>`, so comments, indentation and every other byte
/// stay as they were. Binary files go through libplist (read, set the members, write).
/// Either way the result is read back with libplist and must hold every other member
/// unchanged, in the same order, and the new members as intended; otherwise nothing is
/// written. The original is kept as `PATH.orig` (an existing `.orig` is left alone: it is
/// the oldest original), and the file is replaced by a rename.
public enum InfoPlistFixer {
    /// Applies the changes of every Info.plist in `report`.
    public static func apply(_ report: IOSCheckReport) -> [InfoPlistFixResult] {
        var results: [InfoPlistFixResult] = []
        for plist in report.infoPlists where !plist.changes.isEmpty {
            var result = InfoPlistFixResult(path: plist.path, format: plist.format, keys: plist.changes.map(\.key))
            if report.kind == .appBundle {
                result.refusal = Diagnostic(
                    .warning, IOSCheckCode.fixAppBundle,
                    "\(plist.path) is inside a built, signed app; editing it would break the signature",
                    fix: "run the fix on the project's Info.plist (castprep ios check PROJECT --fix) and build again",
                    location: .init(file: plist.path))
                results.append(result)
                continue
            }
            do {
                result.backupPath = try fix(plist)
            } catch {
                result.refusal = Diagnostic(
                    .error, error.code, error.message, fix: error.fix, location: .init(file: plist.path))
            }
            results.append(result)
        }
        return results
    }

    /// Fixes one file; returns the backup's path.
    static func fix(_ plist: CheckedInfoPlist) throws(PlistError) -> String {
        let path = plist.path
        guard let original = BoundedFile.read(path, limit: PlistLibrary.maximumBytes) else {
            throw PlistError(
                code: IOSCheckCode.fixWriteFailed, message: "\(path) could not be read again",
                fix: "check the file's permissions")
        }
        let before = try PlistLibrary.read(original, name: path)
        let updated: [UInt8]
        switch before.format {
        case .binary:
            updated = try PlistLibrary.rewriteBinary(original, setting: plist.changes)
        case .xml:
            guard let layout = before.layout else {
                throw PlistError(
                    code: IOSCheckCode.fixNotVerified, message: "\(path) could not be laid out for editing",
                    fix: "edit it in Xcode")
            }
            updated = try editXML(original, layout: layout, changes: plist.changes)
        }
        try verify(before: before, after: updated, changes: plist.changes, path: path)
        return try write(updated, original: original, to: path)
    }

    // MARK: - XML text edits

    static func editXML(_ bytes: [UInt8], layout: XMLPlistLayout, changes: [PropertyListEntry]) throws(PlistError)
        -> [UInt8]
    {
        guard let rootClose = layout.rootClose else {
            throw PlistError(
                code: IOSCheckCode.fixNotVerified, message: "the root <dict> of the Info.plist was not found",
                fix: "edit it in Xcode")
        }
        let unit = layout.indentUnit
        // The file's own line ends: CRLF when its first line ends so.
        let newline = bytes.firstIndex(of: 0x0A).map { $0 > 0 && bytes[$0 - 1] == 0x0D } == true ? "\r\n" : "\n"
        var splices: [(range: Range<Int>, text: String)] = []
        var added = ""
        for change in changes {
            if let member = layout.member(change.key) {
                splices.append(
                    (
                        member.valueRange,
                        render(change.value, indentation: member.indentation, unit: unit, newline: newline)
                    ))
            } else {
                added +=
                    "\(unit)<key>\(XMLPlistLayout.escape(change.key))</key>\(newline)\(unit)\(render(change.value, indentation: unit, unit: unit, newline: newline))\(newline)"
            }
        }
        if !added.isEmpty {
            if layout.rootIsEmptyElement {
                // <dict/> becomes <dict>…</dict>.
                let end = (bytes[rootClose...].firstIndex(of: UInt8(ascii: ">")) ?? rootClose) + 1
                splices.append((rootClose..<end, "<dict>" + newline + added + "</dict>"))
            } else {
                // Before the line of </dict> when only indentation precedes it there.
                let lineStart = XMLPlistLayout.lineStart(of: rootClose, in: bytes)
                let onlySpace = bytes[lineStart..<rootClose].allSatisfy { $0 == 0x20 || $0 == 0x09 }
                let position = onlySpace ? lineStart : rootClose
                splices.append((position..<position, onlySpace ? added : newline + added))
            }
        }
        var result = bytes
        for splice in splices.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            result.replaceSubrange(splice.range, with: Array(splice.text.utf8))
        }
        return result
    }

    /// The XML of a value whose first line is already indented by `indentation`.
    static func render(_ value: PropertyListValue, indentation: String, unit: String, newline: String) -> String {
        switch value {
        case .array(let elements):
            var text = "<array>" + newline
            for element in elements {
                text +=
                    "\(indentation)\(unit)<string>\(XMLPlistLayout.escape(element.stringValue ?? ""))</string>"
                    + newline
            }
            return text + "\(indentation)</array>"
        default:
            return "<string>\(XMLPlistLayout.escape(value.stringValue ?? ""))</string>"
        }
    }

    // MARK: - Verification and writing

    /// Reads `after` back and compares it with `before`: same format, every other member
    /// equal and in the same order, each changed member as intended.
    static func verify(before: ParsedPlist, after: [UInt8], changes: [PropertyListEntry], path: String)
        throws(PlistError)
    {
        func refuse(_ reason: String) -> PlistError {
            PlistError(
                code: IOSCheckCode.fixNotVerified,
                message: "the corrected \(path) did not read back as intended (\(reason)); nothing was written",
                fix: "make the change by hand:\n"
                    + changes.map { InfoPlistRules.snippet($0.key, $0.value) }.joined(separator: "\n"))
        }
        let reread: ParsedPlist
        do {
            reread = try PlistLibrary.read(after, name: path)
        } catch {
            throw refuse(error.message)
        }
        guard reread.format == before.format else { throw refuse("it became \(reread.format.rawValue)") }
        guard let old = before.value.entries, let new = reread.value.entries else {
            throw refuse("the root is not a dictionary")
        }
        let changed = Set(changes.map(\.key))
        let keptBefore = old.filter { !changed.contains($0.key) }
        let keptAfter = new.filter { !changed.contains($0.key) }
        guard keptBefore == keptAfter else {
            let difference =
                zip(keptBefore, keptAfter).first { $0 != $1 }.map { "\($0.0.key) changed" }
                ?? "members were added or removed"
            throw refuse(difference)
        }
        for change in changes {
            guard new.filter({ $0.key == change.key }).count == 1, reread.value[change.key] == change.value else {
                throw refuse("\(change.key) is not what was written")
            }
        }
    }

    /// Keeps the original as `path.orig` and replaces `path` with `bytes` by a rename.
    static func write(_ bytes: [UInt8], original: [UInt8], to path: String) throws(PlistError) -> String {
        let manager = FileManager.default
        let backup = path + ".orig"
        let temporary = path + ".castprep-new"
        do {
            if !manager.fileExists(atPath: backup) {
                try Data(original).write(to: URL(fileURLWithPath: backup))
            }
            try Data(bytes).write(to: URL(fileURLWithPath: temporary))
            if let permissions = try? manager.attributesOfItem(atPath: path)[.posixPermissions] {
                try? manager.setAttributes([.posixPermissions: permissions], ofItemAtPath: temporary)
            }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? manager.removeItem(atPath: temporary)
                throw PlistError(
                    code: IOSCheckCode.fixWriteFailed, message: "\(path) could not be replaced: \(reason)",
                    fix: "check that its folder is writable")
            }
        } catch let error as PlistError {
            throw error
        } catch {
            try? manager.removeItem(atPath: temporary)
            throw PlistError(
                code: IOSCheckCode.fixWriteFailed,
                message: "\(path) could not be written: \(error.localizedDescription)",
                fix: "check that its folder is writable")
        }
        return backup
    }
}
