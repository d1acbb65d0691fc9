public import CastDiscovery
public import CastModel
import Foundation
public import JSONSupport
import SystemIO

/// The user's device settings, `$XDG_CONFIG_HOME/castprep/config.json` (by default
/// `~/.config/castprep/config.json`):
///
/// ```json
/// {"defaultDevice": "Living Room TV",
///  "aliases": {"tv": "Living Room TV", "den": "192.168.1.30"},
///  "devices": {"Living Room TV": {"id": "3f1a…", "lastAddress": "192.168.1.20:8009", "model": "Chromecast", "seen": "2025-06-01T20:15:00Z"}}}
/// ```
///
/// `devices` remembers where each saved device was last seen, so `--device NAME` can connect at
/// once instead of browsing. The file is read with limits (size, counts, string lengths) and
/// written atomically (a temporary file renamed over it). Members CastPrep does not know are
/// kept as they are.
public struct CastDeviceConfig: Sendable, Hashable {
    /// What is remembered about one device.
    public struct KnownDevice: Sendable, Hashable {
        /// The device UUID, to check that the device at ``lastAddress`` is still this one.
        public var id: CastDeviceID?
        /// Where it answered last.
        public var lastAddress: CastHostAddress?
        /// Its model (TXT `md` or eureka_info `model_name`).
        public var model: String?
        /// When it was seen, ISO 8601 in UTC.
        public var seen: String?

        /// Creates a record.
        public init(
            id: CastDeviceID? = nil, lastAddress: CastHostAddress? = nil, model: String? = nil, seen: String? = nil
        ) {
            self.id = id
            self.lastAddress = lastAddress
            self.model = model
            self.seen = seen
        }
    }

    /// The device used when a command names none (a name, an alias or `host[:port]`).
    public var defaultDevice: String?
    /// Short names for devices: alias → device name or `host[:port]`.
    public var aliases: [String: String]
    /// Saved devices by friendly name.
    public var devices: [String: KnownDevice]
    /// Top-level members CastPrep does not use, written back unchanged.
    public var otherMembers: [String: JSONValue]

    /// The largest file read, and the most entries of each kind kept.
    public static let maximumBytes = 256 * 1024
    public static let maximumEntries = 512
    /// The longest name, alias or address accepted.
    public static let maximumTextLength = 256

    /// An empty configuration.
    public init(
        defaultDevice: String? = nil, aliases: [String: String] = [:], devices: [String: KnownDevice] = [:],
        otherMembers: [String: JSONValue] = [:]
    ) {
        self.defaultDevice = defaultDevice
        self.aliases = aliases
        self.devices = devices
        self.otherMembers = otherMembers
    }

    // MARK: - Location

    /// The file's path from the environment: `$XDG_CONFIG_HOME/castprep/config.json`, else
    /// `$HOME/.config/castprep/config.json`; nil when neither variable is set (or either is relative).
    public static func path(environment: [String: String]) -> String? {
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") {
            return base + "/castprep/config.json"
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return home + "/.config/castprep/config.json"
        }
        return nil
    }

    // MARK: - Reading

    /// Reads the file at `path`; a missing file is an empty configuration.
    ///
    /// Blocking; call it where blocking is allowed.
    /// - Throws: ``CastDeviceLocatorError`` `config.unreadable`, `config.too-big` or `config.invalid`,
    ///   each naming the path and how to fix it.
    public static func load(from path: String) throws(CastDeviceLocatorError) -> CastDeviceConfig {
        guard FileManager.default.fileExists(atPath: path) else { return CastDeviceConfig() }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configUnreadable, "cannot read the castprep configuration \(path)",
                    fix: "check the file's permissions, or remove it"))
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumBytes + 1)) ?? Data()
        guard data.count <= maximumBytes else {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configTooBig, "the castprep configuration \(path) is over \(maximumBytes / 1024) KiB",
                    fix: "remove entries from it, or delete it and save the devices again with castprep devices --save")
            )
        }
        return try parse(Array(data), path: path)
    }

    /// Reads the file's text; `path` is for messages.
    public static func parse(_ bytes: [UInt8], path: String) throws(CastDeviceLocatorError) -> CastDeviceConfig {
        func invalid(_ why: String) -> CastDeviceLocatorError {
            CastDeviceLocatorError(
                Diagnostic(
                    .error, .configInvalid, "the castprep configuration \(path) is not valid: \(why)",
                    fix:
                        "correct it (see README, \"Devices and names\"), or delete it and save the devices again with castprep devices --save"
                ))
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return CastDeviceConfig() }
        let parser = JSONParser(
            limits: JSONParser.Limits(maxDepth: 16, maxStringBytes: 4096, maxDocumentBytes: maximumBytes))
        let document: JSONValue
        do {
            document = try parser.parse(bytes).value
        } catch {
            throw invalid("\(error)")
        }
        guard var members = document.objectValue else { throw invalid("it must be a JSON object") }
        var config = CastDeviceConfig()
        func text(_ value: JSONValue, _ what: String) throws(CastDeviceLocatorError) -> String {
            guard let string = value.stringValue, !string.isEmpty, string.count <= maximumTextLength else {
                throw invalid("\(what) must be a string of 1 to \(maximumTextLength) characters")
            }
            return string
        }
        if let value = members.removeValue(forKey: "defaultDevice"), value != .null {
            config.defaultDevice = try text(value, "defaultDevice")
        }
        if let value = members.removeValue(forKey: "aliases") {
            guard let aliases = value.objectValue else {
                throw invalid("aliases must be an object {\"alias\": \"device name or host\"}")
            }
            guard aliases.count <= maximumEntries else { throw invalid("more than \(maximumEntries) aliases") }
            for (alias, target) in aliases {
                config.aliases[try text(.string(alias), "an alias")] = try text(target, "alias \"\(alias.prefix(40))\"")
            }
        }
        if let value = members.removeValue(forKey: "devices") {
            guard let devices = value.objectValue else {
                throw invalid("devices must be an object {\"name\": {\"id\": …, \"lastAddress\": …}}")
            }
            guard devices.count <= maximumEntries else { throw invalid("more than \(maximumEntries) devices") }
            for (name, entry) in devices {
                let label = "device \"\(name.prefix(40))\""
                _ = try text(.string(name), "a device name")
                guard let fields = entry.objectValue else { throw invalid("\(label) must be an object") }
                var known = KnownDevice()
                if let id = fields["id"], id != .null {
                    guard let parsed = CastDeviceID(try text(id, "\(label) id")) else {
                        throw invalid("\(label) id must be 32 hex digits")
                    }
                    known.id = parsed
                }
                if let address = fields["lastAddress"], address != .null {
                    do {
                        known.lastAddress = try CastHostAddress(parsing: try text(address, "\(label) lastAddress"))
                    } catch {
                        throw invalid("\(label) lastAddress: \(error.diagnostic.message)")
                    }
                }
                if let model = fields["model"], model != .null { known.model = try text(model, "\(label) model") }
                if let seen = fields["seen"], seen != .null { known.seen = try text(seen, "\(label) seen") }
                config.devices[name] = known
            }
        }
        config.otherMembers = members
        return config
    }

    // MARK: - Writing

    /// The file's JSON.
    public var jsonValue: JSONValue {
        var members = otherMembers
        if let defaultDevice { members["defaultDevice"] = .string(defaultDevice) }
        members["aliases"] = .object(aliases.mapValues(JSONValue.string))
        members["devices"] = .object(
            devices.mapValues { known in
                var fields: [String: JSONValue] = [:]
                if let id = known.id { fields["id"] = .string(id.hex) }
                if let address = known.lastAddress { fields["lastAddress"] = .string(address.description) }
                if let model = known.model { fields["model"] = .string(model) }
                if let seen = known.seen { fields["seen"] = .string(seen) }
                return .object(fields)
            })
        return .object(members)
    }

    /// Writes the file atomically: a temporary file in the same folder, then a rename over the
    /// old one, so a reader never sees half a file. Creates the folder when missing.
    ///
    /// Blocking; call it where blocking is allowed.
    /// - Throws: ``CastDeviceLocatorError`` `config.too-big` or `config.unwritable`.
    public func save(to path: String) throws(CastDeviceLocatorError) {
        let text = JSONWriter.pretty.string(from: jsonValue) + "\n"
        guard text.utf8.count <= Self.maximumBytes, aliases.count <= Self.maximumEntries,
            devices.count <= Self.maximumEntries
        else {
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configTooBig,
                    "the castprep configuration would be over \(Self.maximumBytes / 1024) KiB or \(Self.maximumEntries) entries",
                    fix: "remove devices or aliases from \(path) first"))
        }
        let file = URL(fileURLWithPath: path)
        let folder = file.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(
            ".\(file.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            guard
                FileManager.default.createFile(
                    atPath: temporary.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(temporary.path, file.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .configUnwritable, "cannot write the castprep configuration \(path)",
                    fix: "check that \(folder.path) is writable, or point XDG_CONFIG_HOME at a writable folder"))
        }
    }

    // MARK: - Lookups

    /// What `text` stands for after following an alias (one level; aliases match in any case).
    public func resolvingAlias(_ text: String) -> String {
        let folded = CastDeviceMatcher.fold(text)
        return aliases.first { CastDeviceMatcher.fold($0.key) == folded }?.value ?? text
    }

    /// The saved device `text` names: by its name in any case, or by its id.
    public func knownDevice(_ text: String) -> (name: String, device: KnownDevice)? {
        let folded = CastDeviceMatcher.fold(text)
        let id = CastDeviceID(folded)
        return devices.sorted { $0.key < $1.key }
            .first { CastDeviceMatcher.fold($0.key) == folded || (id != nil && $0.value.id == id) }
            .map { ($0.key, $0.value) }
    }

    /// Records `device` under its friendly name (or its address when it has none), seen at `seen`.
    public mutating func record(_ device: LocatedCastDevice, seen: String) {
        let name =
            device.friendlyName.flatMap { $0.isEmpty ? nil : String($0.prefix(Self.maximumTextLength)) }
            ?? device.address.description
        var known = devices[name] ?? KnownDevice()
        known.id = device.id ?? known.id
        known.lastAddress = device.address
        known.model = device.model.map { String($0.prefix(Self.maximumTextLength)) } ?? known.model
        known.seen = seen
        devices[name] = known
    }
}

/// How `--device`, `CASTPREP_DEVICE` and `defaultDevice` text is read: an IP address (with an
/// optional port), `[IPv6]:port`, or `host:port` is an address; anything else is a device name.
/// (A bare host name needs its port, `tv.lan:8009`, since "Kitchen" is a name, not a host.)
public enum CastDeviceReference: Sendable, Hashable {
    case name(String)
    case host(CastHostAddress)

    /// Reads `text`.
    public init(_ text: String) {
        let trimmed = CastDeviceMatcher.fold(text).isEmpty ? text : text.trimmingCharacters(in: .whitespaces)
        if let address = try? CastHostAddress(parsing: trimmed),
            IPv4Address(address.host) != nil || address.host.contains(":") || trimmed.hasPrefix("[")
                || trimmed.contains(":")
        {
            self = .host(address)
        } else {
            self = .name(trimmed)
        }
    }
}

extension DiagnosticCode {
    /// The configuration file cannot be read.
    public static let configUnreadable: DiagnosticCode = "config.unreadable"
    /// The configuration file is over its size or entry limit.
    public static let configTooBig: DiagnosticCode = "config.too-big"
    /// The configuration file is not the JSON CastPrep expects.
    public static let configInvalid: DiagnosticCode = "config.invalid"
    /// The configuration file cannot be written.
    public static let configUnwritable: DiagnosticCode = "config.unwritable"
}
