import CastModel
public import JSONSupport

/// A button a controller slot holds: the Cast SDK's framework button types (GCKUIMediaButtonType) or a custom one.
public enum RemoteButton: Sendable, Hashable {
    case none
    case playPauseToggle
    case skipPrevious
    case skipNext
    case rewind30Seconds
    case forward30Seconds
    case muteToggle
    case closedCaptions
    case stop
    case custom(CustomButton)

    /// The framework types by the names layout files use (the SDK's, without the prefix).
    public static let frameworkTypes: [String: RemoteButton] = [
        "none": .none, "playPauseToggle": .playPauseToggle, "skipPrevious": .skipPrevious, "skipNext": .skipNext,
        "rewind30Seconds": .rewind30Seconds, "forward30Seconds": .forward30Seconds, "muteToggle": .muteToggle,
        "closedCaptions": .closedCaptions, "stop": .stop,
    ]

    /// The key that presses this button; nil for an empty slot.
    public var key: Key? {
        switch self {
        case .none: nil
        case .playPauseToggle: .character(" ")
        case .skipPrevious: .character("p")
        case .skipNext: .character("n")
        case .rewind30Seconds: .character("b")
        case .forward30Seconds: .character("f")
        case .muteToggle: .character("m")
        case .closedCaptions: .character("c")
        case .stop: .character("s")
        case .custom(let button): .character(button.key)
        }
    }
}

/// A user's button: a key, a label, and what it does.
public struct CustomButton: Sendable, Hashable {
    /// What a custom button does.
    public enum Action: Sendable, Hashable {
        /// Sends `message` on a custom namespace (`urn:x-cast:…`) to the running app.
        case message(namespace: String, payload: JSONValue)
        /// Runs a command with `sh -c`; `CASTPREP_DEVICE` names the device (host:port).
        case command(String)
    }

    public var key: Character
    public var label: String
    public var action: Action

    public init(key: Character, label: String, action: Action) {
        self.key = key
        self.label = label
        self.action = action
    }
}

/// Which buttons the controllers show: 4 slots around the expanded controller's fixed
/// play/pause, 3 slots on the mini controller (the Cast SDK's GCKUIMediaButtonBarProtocol).
///
/// A layout file:
/// ```json
/// {"expanded": ["rewind30Seconds", "skipPrevious", "skipNext", "forward30Seconds"],
///  "mini": ["playPauseToggle", "muteToggle",
///           {"type": "custom", "key": "l", "label": "like", "namespace": "urn:x-cast:com.example.like", "message": {"like": true}}]}
/// ```
/// A slot left out is `none`; `{"type": "custom", "key": "o", "label": "notes", "command": "notify-send hi"}` runs a command.
public struct RemoteLayout: Sendable, Hashable {
    /// The expanded controller's 4 slots, left to right (play/pause sits between the second and third).
    public var expanded: [RemoteButton]
    /// The mini controller's 3 slots.
    public var mini: [RemoteButton]

    public init(expanded: [RemoteButton], mini: [RemoteButton]) {
        self.expanded = Self.padded(expanded, to: Self.expandedSlots)
        self.mini = Self.padded(mini, to: Self.miniSlots)
    }

    public static let expandedSlots = 4
    public static let miniSlots = 3

    /// The SDK's defaults: skip previous, rewind 30, forward 30, skip next; the mini controller's play/pause, mute, captions.
    public static let standard = RemoteLayout(
        expanded: [.skipPrevious, .rewind30Seconds, .forward30Seconds, .skipNext],
        mini: [.playPauseToggle, .muteToggle, .closedCaptions])

    /// Keys the controller itself uses, which custom buttons may not take.
    public static let reservedKeys: Set<Character> = [
        " ", "p", "n", "b", "f", "m", "c", "s", "q", "?", "t", "l", "+", "-", "=", "_", "h", "j", "k", "x", "d", "u",
        "g", "0",
        "1", "2", "3", "4", "5", "6", "7", "8", "9", "r",
    ]

    /// The custom buttons of either controller, by key.
    public var customButtons: [Character: CustomButton] {
        var buttons: [Character: CustomButton] = [:]
        for case .custom(let button) in expanded + mini { buttons[button.key] = button }
        return buttons
    }

    static func padded(_ buttons: [RemoteButton], to count: Int) -> [RemoteButton] {
        Array(buttons.prefix(count)) + Array(repeating: RemoteButton.none, count: max(0, count - buttons.count))
    }

    /// Reads a layout file; a controller it does not mention keeps the standard slots.
    ///
    /// - Throws: ``RemoteFileError`` naming the file, line:column and JSON path: not JSON, over
    ///   64 KiB, an unknown member or button type (with a did-you-mean), too many buttons for the
    ///   slots, a custom button whose key is not one character or is taken, or whose action is
    ///   not exactly one of `namespace`+`message` and `command`.
    public static func parse(_ bytes: [UInt8], path: String) throws(RemoteFileError) -> RemoteLayout {
        let (value, locator) = try RemoteFiles.parse(bytes, path: path, what: "layout")
        func fail(_ code: DiagnosticCode, _ message: String, fix: String, _ at: JSONPath) -> RemoteFileError {
            RemoteFiles.error(code, message, fix: fix, at: at, file: path, locator: locator)
        }
        guard let root = value.objectValue else {
            throw fail(
                RemoteFileError.Code.wrongType, "a layout file is a JSON object with expanded and mini button lists",
                fix: #"start from {"expanded": ["skipPrevious", "rewind30Seconds", "forward30Seconds", "skipNext"]}"#,
                .root)
        }
        var layout = RemoteLayout.standard
        var usedKeys: [Character: (path: JSONPath, button: CustomButton)] = [:]
        for (name, member) in root.sorted(by: { $0.key < $1.key }) {
            let memberPath = JSONPath.root.appending(name)
            let slots: Int
            switch name {
            case "expanded": slots = expandedSlots
            case "mini": slots = miniSlots
            default:
                throw fail(
                    RemoteFileError.Code.unknownMember, "unknown member '\(name.prefix(60))' in the layout file",
                    fix: RemoteFiles.suggestion(for: name, among: ["expanded", "mini"]), memberPath)
            }
            guard let list = member.arrayValue else {
                throw fail(
                    RemoteFileError.Code.wrongType,
                    "\(name) is a \(member.typeName); it must be a list of button types",
                    fix: #"write "\#(name)": ["playPauseToggle", "muteToggle"]"#, memberPath)
            }
            guard list.count <= slots else {
                throw fail(
                    RemoteFileError.Code.tooManySlots,
                    "\(name) lists \(list.count) buttons; the \(name) controller has \(slots) slots",
                    fix: "keep \(slots) buttons (\"none\" leaves a slot empty)", memberPath)
            }
            var buttons: [RemoteButton] = []
            for (index, entry) in list.enumerated() {
                let entryPath = memberPath.appending(index: index)
                let button = try parseButton(entry, at: entryPath, fail: fail)
                if case .custom(let custom) = button {
                    // The same button may sit on both controllers; two different buttons may not share a key.
                    if let earlier = usedKeys[custom.key], earlier.button != custom {
                        throw fail(
                            RemoteFileError.Code.badKey,
                            "key '\(custom.key)' is already used by the button at \(earlier.path)",
                            fix: "give each custom button its own key", entryPath.appending("key"))
                    }
                    usedKeys[custom.key] = (entryPath, custom)
                }
                buttons.append(button)
            }
            if name == "expanded" {
                layout.expanded = padded(buttons, to: slots)
            } else {
                layout.mini = padded(buttons, to: slots)
            }
        }
        return layout
    }

    private static func parseButton(
        _ entry: JSONValue, at entryPath: JSONPath,
        fail: (DiagnosticCode, String, String, JSONPath) -> RemoteFileError
    ) throws(RemoteFileError) -> RemoteButton {
        let typeNames = frameworkTypeNames + ["custom"]
        if let name = entry.stringValue {
            guard let button = RemoteButton.frameworkTypes[name] else {
                throw fail(
                    RemoteFileError.Code.unknownButton,
                    name == "custom"
                        ? "a custom button needs an object with its key, label and action"
                        : "unknown button type '\(name.prefix(60))'",
                    name == "custom"
                        ? #"write {"type": "custom", "key": "l", "label": "like", "command": "…"}"#
                        : RemoteFiles.suggestion(for: name, among: typeNames), entryPath)
            }
            return button
        }
        guard let object = entry.objectValue else {
            throw fail(
                RemoteFileError.Code.wrongType,
                "a slot is a button type name or a custom button object, not a \(entry.typeName)",
                "write \"skipNext\", \"none\", or {\"type\": \"custom\", …}", entryPath)
        }
        let allowed = ["type", "key", "label", "namespace", "message", "command"]
        for name in object.keys.sorted() where !allowed.contains(name) {
            throw fail(
                RemoteFileError.Code.unknownMember, "unknown member '\(name.prefix(60))' in a button",
                RemoteFiles.suggestion(for: name, among: allowed),
                entryPath.appending(name))
        }
        let type = object["type"]?.stringValue ?? ""
        guard type == "custom" else {
            if let button = RemoteButton.frameworkTypes[type], object.count == 1 { return button }
            throw fail(
                RemoteFileError.Code.unknownButton,
                "a button object must have \"type\": \"custom\" (got \(object["type"].map { JSONWriter.compact.string(from: $0).prefix(40) } ?? "no type"))",
                "framework buttons are written as a name (\"skipNext\"); objects are custom buttons",
                entryPath.appending("type"))
        }
        guard let keyText = object["key"]?.stringValue, keyText.count == 1, let key = keyText.first,
            key.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value < 0x7F })
        else {
            throw fail(
                RemoteFileError.Code.badKey, "a custom button's key must be one printable ASCII character",
                "write \"key\": \"l\" (any letter or sign the controller does not use)", entryPath.appending("key"))
        }
        guard !reservedKeys.contains(key) else {
            throw fail(
                RemoteFileError.Code.badKey, "key '\(key)' is one of the controller's own keys",
                "choose a key outside \(reservedKeys.sorted().map { $0 == " " ? "space" : String($0) }.joined(separator: " "))",
                entryPath.appending("key"))
        }
        let label = object["label"]?.stringValue ?? String(key)
        guard !label.isEmpty, label.count <= 16,
            label.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw fail(
                RemoteFileError.Code.badCustomButton, "a custom button's label must be 1 to 16 printable characters",
                "write a short word, such as \"like\"", entryPath.appending("label"))
        }
        let namespace = object["namespace"]?.stringValue
        let message = object["message"]
        let command = object["command"]?.stringValue
        switch (namespace, message, command) {
        case (let namespace?, let message?, nil):
            guard namespace.hasPrefix("urn:x-cast:"), namespace.count <= 128,
                !namespace.hasPrefix("urn:x-cast:com.google.cast.")
            else {
                throw fail(
                    RemoteFileError.Code.badCustomButton,
                    "namespace '\(namespace.prefix(60))' is not an app's custom namespace",
                    "use urn:x-cast: followed by your app's name, such as urn:x-cast:com.example.player (com.google.cast.* belong to the platform)",
                    entryPath.appending("namespace"))
            }
            return .custom(
                CustomButton(key: key, label: label, action: .message(namespace: namespace, payload: message)))
        case (nil, nil, let command?):
            guard !command.isEmpty, command.utf8.count <= 1024 else {
                throw fail(
                    RemoteFileError.Code.badCustomButton, "a custom button's command must be 1 to 1,024 bytes",
                    "write the command as you would type it in a shell", entryPath.appending("command"))
            }
            return .custom(CustomButton(key: key, label: label, action: .command(command)))
        default:
            throw fail(
                RemoteFileError.Code.badCustomButton, "a custom button needs either namespace and message, or command",
                #"write "namespace": "urn:x-cast:com.example.player", "message": {…} — or "command": "…""#, entryPath)
        }
    }

    static let frameworkTypeNames = [
        "none", "playPauseToggle", "skipPrevious", "skipNext", "rewind30Seconds", "forward30Seconds", "muteToggle",
        "closedCaptions", "stop",
    ]
}
