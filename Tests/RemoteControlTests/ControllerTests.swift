import CastModel
import JSONSupport
import RemoteControl
import Testing

@Suite("remote: keys")
struct KeyDecoderTests {
    @Test(
        "bytes to keys",
        arguments: [
            ([UInt8](" q?".utf8), [Key.character(" "), .character("q"), .character("?")]),
            ([0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x42, 0x1B, 0x5B, 0x43, 0x1B, 0x5B, 0x44], [.up, .down, .right, .left]),
            ([0x1B, 0x4F, 0x41], [.up]),  // application cursor mode
            ([0x1B, 0x5B, 0x35, 0x7E, 0x1B, 0x5B, 0x36, 0x7E], [.pageUp, .pageDown]),
            ([0x1B], [.escape]),
            ([0x03, 0x0D, 0x7F, 0x09], [.interrupt, .enter, .backspace, .tab]),
            ([0xC3, 0xA9], [.character("é")]),
            // An unknown control byte and sequence are dropped.
            ([0x01, 0x1B, 0x5B, 0x39, 0x39, 0x5A, 0x61], [.character("a")]),
        ])
    func decodes(bytes: [UInt8], keys: [Key]) {
        var decoder = KeyDecoder()
        #expect(decoder.decode(bytes) == keys)
    }

    @Test("a sequence split between reads is joined")
    func split() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B], isComplete: false) == [])
        #expect(decoder.decode([0x5B], isComplete: false) == [])
        #expect(decoder.decode([0x41, 0x71]) == [.up, .character("q")])
        #expect(decoder.decode([0xC3], isComplete: false) == [])
        #expect(decoder.decode([0xA9]) == [.character("é")])
    }
}

@Suite("remote: controller logic")
struct ControllerTests {
    func controller(
        _ snapshot: RemoteSnapshot = Fixtures.snapshot(), layout: RemoteLayout = .standard,
        presentation: RemoteController.Presentation = .expanded
    ) -> RemoteController {
        RemoteController(snapshot: snapshot, layout: layout, presentation: presentation)
    }

    @Test(
        "keys of the expanded controller while playing (42.5 s at t=100, now t=102)",
        arguments: [
            (Key.character(" "), [RemoteAction.pause]),
            (.left, [.seek(to: 34.5)]), (.right, [.seek(to: 54.5)]),
            (.character("b"), [.seek(to: 14.5)]), (.character("f"), [.seek(to: 74.5)]),
            (.character("p"), [.previous]), (.character("n"), [.next]), (.character("s"), [.stop]),
            (.character("m"), [.setMuted(true)]),
            (.character("+"), [.setVolume(0.45)]), (.up, [.setVolume(0.45)]), (.character("-"), [.setVolume(0.35)]),
            (.character("5"), [.seek(to: 298)]), (.character("0"), [.seek(to: 0)]),
            (.character("q"), [.quit]), (.interrupt, [.quit]), (.escape, [.quit]),
            (.character("z"), []),
        ])
    func keys(key: Key, actions: [RemoteAction]) {
        var controller = controller()
        #expect(controller.handle(key, now: 102) == actions)
    }

    @Test("play when paused; the position does not move while paused")
    func paused() {
        var controller = controller(Fixtures.snapshot(playerState: .paused))
        #expect(controller.handle(.character(" "), now: 500) == [.play])
        #expect(controller.handle(.right, now: 500) == [.seek(to: 52.5)])
    }

    @Test("seeking stays inside the item; volume inside 0…1")
    func bounds() {
        var snapshot = Fixtures.snapshot()
        snapshot.media?.currentTime = 590
        var controller = controller(snapshot)
        #expect(controller.handle(.character("f"), now: 100) == [.seek(to: 596)])
        controller.snapshot.volume = CastVolume(level: 1, muted: false)
        #expect(controller.handle(.character("+"), now: 100) == [.setVolume(1)])
    }

    @Test("the track selector: captions, off, audio, text style")
    func tracks() {
        var controller = controller()
        #expect(controller.handle(.character("t"), now: 100) == [])
        #expect(controller.panel == .tracks(selection: 1))  // "Off" is the first row that can be chosen
        #expect(controller.handle(.enter, now: 100) == [.setActiveTracks([10])])
        #expect(controller.panel == .tracks(selection: 1))  // the selector stays open
        _ = controller.handle(.down, now: 100)
        _ = controller.handle(.down, now: 100)
        #expect(controller.handle(.enter, now: 100) == [.setActiveTracks([10, 2])])
        for _ in 0..<2 { _ = controller.handle(.down, now: 100) }  // skips the "Audio" heading
        #expect(controller.handle(.enter, now: 100) == [.setActiveTracks([1, 11])])
        for _ in 0..<2 { _ = controller.handle(.down, now: 100) }
        #expect(controller.handle(.enter, now: 100) == [.setTextTrackStyle(RemoteController.textStyles[1].style)])
        #expect(controller.handle(.escape, now: 100) == [])
        #expect(controller.panel == .none)
    }

    @Test("the queue list: jump, remove, move up and down")
    func queue() {
        var controller = controller()
        _ = controller.handle(.character("l"), now: 100)
        #expect(controller.panel == .queue(selection: 1))  // the current item
        #expect(controller.handle(.enter, now: 100) == [.jump(itemID: 2)])
        #expect(controller.handle(.character("<"), now: 100) == [.reorder(itemID: 2, before: 1)])
        #expect(controller.panel == .queue(selection: 0))
        _ = controller.handle(.down, now: 100)
        #expect(controller.handle(.character(">"), now: 100) == [.reorder(itemID: 2, before: nil)])
        #expect(controller.handle(.character("x"), now: 100) == [.remove(itemID: 3)])
    }

    @Test("mini controller: captions cycle through the text tracks and off")
    func miniCaptions() {
        var controller = controller(presentation: .mini)
        #expect(controller.handle(.character("c"), now: 100) == [.setActiveTracks([10, 2])])
        controller.snapshot.media?.activeTrackIDs = [10, 2]
        #expect(controller.handle(.character("c"), now: 100) == [.setActiveTracks([10])])
        controller.snapshot.media?.activeTrackIDs = [10]
        #expect(controller.handle(.character("c"), now: 100) == [.setActiveTracks([10, 1])])
    }

    @Test("custom buttons send their message or run their command")
    func custom() {
        let like = CustomButton(
            key: "L", label: "like", action: .message(namespace: "urn:x-cast:com.example.like", payload: ["like": true])
        )
        let note = CustomButton(key: "o", label: "notify", action: .command("echo hi"))
        var controller = controller(layout: RemoteLayout(expanded: [.custom(like)], mini: [.custom(note)]))
        #expect(
            controller.handle(.character("L"), now: 100) == [
                .sendMessage(namespace: "urn:x-cast:com.example.like", payload: ["like": true])
            ])
        #expect(controller.handle(.character("o"), now: 100) == [.runCommand("echo hi")])
    }

    @Test("the introductory overlay: the first dismissal is remembered, ? shows it again")
    func introduction() {
        var controller = RemoteController(snapshot: Fixtures.snapshot(), showsIntroduction: true)
        #expect(controller.panel == .introduction(firstRun: true))
        #expect(controller.handle(.character(" "), now: 100) == [.introductionSeen])  // the key only dismisses
        #expect(controller.handle(.character("?"), now: 100) == [])
        #expect(controller.panel == .introduction(firstRun: false))
        #expect(controller.handle(.character("q"), now: 100) == [])
        #expect(controller.panel == .none)
    }

    @Test("the chooser: default device first, then devices, then groups")
    func chooserOrder() {
        let entries = [
            DeviceChooser.Entry(
                name: "Whole house", model: "Google Cast Group", address: "10.0.0.9:32187", isGroup: true,
                isDefault: false),
            DeviceChooser.Entry(
                name: "kitchen", model: "Google Home", address: "10.0.0.5:8009", isGroup: false, isDefault: false),
            DeviceChooser.Entry(
                name: "Living Room TV", model: "Chromecast", address: "10.0.0.4:8009", isGroup: false, isDefault: true),
            DeviceChooser.Entry(
                name: "Bedroom", model: "Chromecast", address: "10.0.0.6:8009", isGroup: false, isDefault: false),
        ]
        #expect(DeviceChooser.ordered(entries).map(\.name) == ["Living Room TV", "Bedroom", "kitchen", "Whole house"])
        var chooser = DeviceChooser(phase: .choosing(DeviceChooser.ordered(entries), selection: 0))
        #expect(chooser.handle(.down) == .none)
        #expect(chooser.handle(.enter) == .connect(DeviceChooser.ordered(entries)[1]))
        #expect(chooser.handle(.character("r")) == .searchAgain)
        #expect(chooser.handle(.character("q")) == .quit)
    }
}
