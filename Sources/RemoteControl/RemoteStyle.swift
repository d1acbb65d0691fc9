import CastModel
import JSONSupport

/// A place in the Cast SDK's style hierarchy (GCKUIStyle's `castViews`): groups and the widgets in them.
///
/// ```
/// castViews
/// ├── instructions
/// ├── deviceControl: deviceChooser, noDevicesAvailableController, connectionController
/// └── mediaControl: miniController, expandedController, trackSelector
/// ```
public enum StyleNode: String, Sendable, Hashable, CaseIterable {
    case castViews, instructions, deviceControl, deviceChooser, noDevicesAvailableController, connectionController
    case mediaControl, miniController, expandedController, trackSelector

    /// The group this node belongs to; nil for the root.
    public var parent: StyleNode? {
        switch self {
        case .castViews: nil
        case .instructions, .deviceControl, .mediaControl: .castViews
        case .deviceChooser, .noDevicesAvailableController, .connectionController: .deviceControl
        case .miniController, .expandedController, .trackSelector: .mediaControl
        }
    }

    /// The nodes inside this group.
    public var children: [StyleNode] { Self.allCases.filter { $0.parent == self } }

    /// The node and its groups, root first.
    public var lineage: [StyleNode] {
        var nodes = [self]
        while let parent = nodes[0].parent { nodes.insert(parent, at: 0) }
        return nodes
    }
}

/// The attributes a style node may set; nil inherits the group's value.
public struct StyleAttributes: Sendable, Hashable {
    public var headingTextColor: TerminalColor?
    public var bodyTextColor: TerminalColor?
    public var buttonTextColor: TerminalColor?
    public var backgroundColor: TerminalColor?
    public var iconTintColor: TerminalColor?

    public init(
        headingTextColor: TerminalColor? = nil, bodyTextColor: TerminalColor? = nil,
        buttonTextColor: TerminalColor? = nil,
        backgroundColor: TerminalColor? = nil, iconTintColor: TerminalColor? = nil
    ) {
        self.headingTextColor = headingTextColor
        self.bodyTextColor = bodyTextColor
        self.buttonTextColor = buttonTextColor
        self.backgroundColor = backgroundColor
        self.iconTintColor = iconTintColor
    }

    /// The attribute names as style files spell them (the SDK's property names).
    public static let names = [
        "headingTextColor", "bodyTextColor", "buttonTextColor", "backgroundColor", "iconTintColor",
    ]

    subscript(name: String) -> TerminalColor? {
        get {
            switch name {
            case "headingTextColor": headingTextColor
            case "bodyTextColor": bodyTextColor
            case "buttonTextColor": buttonTextColor
            case "backgroundColor": backgroundColor
            case "iconTintColor": iconTintColor
            default: nil
            }
        }
        set {
            switch name {
            case "headingTextColor": headingTextColor = newValue
            case "bodyTextColor": bodyTextColor = newValue
            case "buttonTextColor": buttonTextColor = newValue
            case "backgroundColor": backgroundColor = newValue
            case "iconTintColor": iconTintColor = newValue
            default: break
            }
        }
    }

    /// These attributes with each unset one taken from `group`.
    public func inheriting(from group: StyleAttributes) -> StyleAttributes {
        StyleAttributes(
            headingTextColor: headingTextColor ?? group.headingTextColor,
            bodyTextColor: bodyTextColor ?? group.bodyTextColor,
            buttonTextColor: buttonTextColor ?? group.buttonTextColor,
            backgroundColor: backgroundColor ?? group.backgroundColor,
            iconTintColor: iconTintColor ?? group.iconTintColor)
    }
}

/// The styles of every node, read from a style file; a widget's effective style is its own
/// attributes over its groups' (``resolved(_:)``).
///
/// A style file mirrors the hierarchy:
/// ```json
/// {"castViews": {"bodyTextColor": "#d0d0d0",
///   "mediaControl": {"headingTextColor": "#ffaf00",
///     "miniController": {"bodyTextColor": "cyan"}}}}
/// ```
public struct RemoteStyleSheet: Sendable, Hashable {
    /// What each node sets itself.
    public var attributes: [StyleNode: StyleAttributes]

    public init(attributes: [StyleNode: StyleAttributes] = [:]) { self.attributes = attributes }

    /// The built-in look: headings bold in the terminal's colours, buttons and icons tinted.
    public static let standard = RemoteStyleSheet(attributes: [
        .castViews: StyleAttributes(
            headingTextColor: .palette(15), buttonTextColor: .palette(14), iconTintColor: .palette(11)),
        .noDevicesAvailableController: StyleAttributes(headingTextColor: .palette(9)),
    ])

    /// The effective attributes of `node`: its own, then each enclosing group's, nearest first.
    public func resolved(_ node: StyleNode) -> StyleAttributes {
        node.lineage.reduce(StyleAttributes()) { inherited, level in
            (attributes[level] ?? StyleAttributes()).inheriting(from: inherited)
        }
    }

    /// This sheet with `other`'s settings on top (a user's file over the built-in look).
    public func overlaid(with other: RemoteStyleSheet) -> RemoteStyleSheet {
        var merged = attributes
        for (node, set) in other.attributes { merged[node] = set.inheriting(from: merged[node] ?? StyleAttributes()) }
        return RemoteStyleSheet(attributes: merged)
    }

    /// Reads a style file.
    ///
    /// - Throws: ``RemoteFileError`` with the file, line:column, JSON path and a fix: not JSON,
    ///   over 64 KiB, a member that is neither an attribute nor a child of that group
    ///   (`remote.unknown-member`, with a did-you-mean), a value that is not a colour.
    public static func parse(_ bytes: [UInt8], path: String) throws(RemoteFileError) -> RemoteStyleSheet {
        let (value, locator) = try RemoteFiles.parse(bytes, path: path, what: "style")
        guard let root = value.objectValue else {
            throw RemoteFiles.error(
                RemoteFileError.Code.wrongType, "a style file is a JSON object with one member, castViews",
                fix: ##"start from {"castViews": {"bodyTextColor": "#d0d0d0"}}"##, at: .root, file: path,
                locator: locator)
        }
        var sheet = RemoteStyleSheet()
        for (name, member) in root.sorted(by: { $0.key < $1.key }) {
            guard name == StyleNode.castViews.rawValue else {
                throw RemoteFiles.error(
                    RemoteFileError.Code.unknownMember, "unknown member '\(name)' at the top of the style file",
                    fix: "the hierarchy starts at castViews; "
                        + RemoteFiles.suggestion(for: name, among: ["castViews"]),
                    at: JSONPath.root.appending(name), file: path, locator: locator)
            }
            try read(
                member, node: .castViews, at: JSONPath.root.appending(name), into: &sheet, file: path, locator: locator)
        }
        return sheet
    }

    private static func read(
        _ value: JSONValue, node: StyleNode, at jsonPath: JSONPath, into sheet: inout RemoteStyleSheet, file: String,
        locator: JSONSourceLocator
    ) throws(RemoteFileError) {
        guard let members = value.objectValue else {
            throw RemoteFiles.error(
                RemoteFileError.Code.wrongType,
                "\(node.rawValue) is a \(value.typeName); it must be an object of attributes and groups",
                fix: ##"write "\##(node.rawValue)": {"bodyTextColor": "#d0d0d0"}"##, at: jsonPath, file: file,
                locator: locator)
        }
        var own = StyleAttributes()
        let children = node.children.map(\.rawValue)
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            let memberPath = jsonPath.appending(name)
            if StyleAttributes.names.contains(name) {
                guard let text = member.stringValue, let color = TerminalColor(parsing: text) else {
                    let shown = member.stringValue.map { "'\($0.prefix(40))'" } ?? "a \(member.typeName)"
                    throw RemoteFiles.error(
                        RemoteFileError.Code.badColor, "\(name) of \(node.rawValue) is \(shown), not a colour",
                        fix:
                            "use \"#rrggbb\", \"#rgb\", a palette index such as \"214\", or a name (\(TerminalColor.names.keys.sorted().prefix(8).joined(separator: ", "))…)",
                        at: memberPath, file: file, locator: locator)
                }
                own[name] = color
            } else if let child = StyleNode(rawValue: name), children.contains(name) {
                try read(member, node: child, at: memberPath, into: &sheet, file: file, locator: locator)
            } else {
                let placement = StyleNode(rawValue: name).map {
                    "\($0.rawValue) belongs in \($0.parent?.rawValue ?? "the top level"), not in \(node.rawValue)"
                }
                throw RemoteFiles.error(
                    RemoteFileError.Code.unknownMember,
                    placement ?? "unknown member '\(name.prefix(60))' in \(node.rawValue)",
                    fix: placement.map { _ in "move it into its group" }
                        ?? RemoteFiles.suggestion(for: name, among: StyleAttributes.names + children),
                    at: memberPath, file: file, locator: locator)
            }
        }
        sheet.attributes[node] = own
    }
}

/// The cell styles one screen draws with, from a node's effective attributes.
public struct ScreenPalette: Sendable, Hashable {
    public var heading: CellStyle
    public var body: CellStyle
    public var button: CellStyle
    public var icon: CellStyle
    public var background: TerminalColor?
    /// The style of a selected row or the focused button.
    public var selected: CellStyle

    /// The styles of `node` in `sheet` at `depth`; in monochrome, headings are bold and selections reversed.
    public init(_ sheet: RemoteStyleSheet, node: StyleNode, depth: ColorDepth) {
        let attributes = sheet.resolved(node)
        let colored = depth != .monochrome
        background = colored ? attributes.backgroundColor : nil
        heading = CellStyle(foreground: colored ? attributes.headingTextColor : nil, background: background, bold: true)
        body = CellStyle(foreground: colored ? attributes.bodyTextColor : nil, background: background)
        button = CellStyle(
            foreground: colored ? attributes.buttonTextColor : nil, background: background, bold: !colored)
        icon = CellStyle(foreground: colored ? attributes.iconTintColor : nil, background: background, bold: true)
        selected = CellStyle(foreground: nil, background: nil, bold: true, reverse: true)
    }
}
