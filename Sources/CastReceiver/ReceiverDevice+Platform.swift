import CastModel
import JSONSupport

/// The platform endpoint `receiver-0`: GET_STATUS, LAUNCH, STOP, SET_VOLUME, GET_APP_AVAILABILITY.
extension ReceiverDevice {
    mutating func handlePlatform(_ payload: JSONValue, from connection: VirtualConnection) {
        let requestID = requestID(of: payload)
        var findings: [Diagnostic] = []
        let decoded = ReceiverRequest.decode(from: payload, diagnostics: &findings)
        switch decoded {
        case .getStatus?:
            reply(receiverStatusMessage(requestID: requestID), on: connection, namespace: .receiver)
        case .launch(let request)?:
            handleLaunch(request, findings: findings, requestID: requestID, from: connection)
        case .stop(let request)?:
            handleStop(request, requestID: requestID, from: connection)
        case .setVolume(let request)?:
            handleDeviceVolume(request, requestID: requestID, from: connection)
        case .getAppAvailability(let request)?:
            handleAppAvailability(request, requestID: requestID, from: connection)
        case .other?, nil:
            // Devices answer an unknown request only when it has a requestId to answer.
            guard payload["requestId"] != nil else {
                let type = decoded?.messageType
                note(
                    "ignored: \(type.map { "\"\($0)\"" } ?? "a message without type") has no requestId",
                    sender: connection.sender)
                return
            }
            reply(
                ["type": "INVALID_REQUEST", "requestId": JSONValue(requestID), "reason": "INVALID_COMMAND"],
                on: connection, namespace: .receiver)
        }
    }

    func receiverStatusMessage(requestID: Int) -> JSONValue {
        ReceiverStatusMessage(requestID: requestID, status: receiverStatus).jsonValue
    }

    /// Replies with RECEIVER_STATUS and broadcasts it to every socket on `receiver-0`.
    mutating func announceReceiverStatus(answering requestID: Int, on connection: VirtualConnection) {
        reply(receiverStatusMessage(requestID: requestID), on: connection, namespace: .receiver)
        broadcast(receiverStatusMessage(requestID: 0), from: CastEndpoint.platform, namespace: .receiver)
    }

    mutating func launchError(
        _ reason: String, requestID: Int, on connection: VirtualConnection, findings: [Diagnostic] = []
    ) {
        if !findings.isEmpty { note("LAUNCH refused: \(reason)", sender: connection.sender, diagnostics: findings) }
        reply(
            ["type": "LAUNCH_ERROR", "requestId": JSONValue(requestID), "reason": .string(reason)], on: connection,
            namespace: .receiver)
    }

    mutating func handleLaunch(
        _ request: LaunchRequest, findings decoded: [Diagnostic], requestID: Int, from connection: VirtualConnection
    ) {
        let findings = decoded + validator.validate(request)
        let blocking = findings.filter { $0.severity == .error }
        if !blocking.isEmpty {
            return launchError("BAD_PARAMETER", requestID: requestID, on: connection, findings: blocking)
        }
        guard let appID = request.appID else {
            return launchError("BAD_PARAMETER", requestID: requestID, on: connection)
        }
        if let reason = faults.refusedLaunches[appID] {
            note("fault: refusing LAUNCH of \(appID) with \(reason)", sender: connection.sender)
            return launchError(reason, requestID: requestID, on: connection)
        }
        guard let app = configuration.installedApps.first(where: { $0.appID == appID }) else {
            return launchError("NOT_FOUND", requestID: requestID, on: connection)
        }
        // Cast Connect: the sender lists the app platforms it can talk to.
        let types = request.supportedAppTypes ?? [.web]
        let appType: ReceiverAppType
        if types.contains(.androidTV), app.hasAndroidTVVersion {
            appType = .androidTV
        } else if types.contains(.web) {
            appType = .web
        } else {
            return launchError(
                "NOT_FOUND", requestID: requestID, on: connection,
                findings: [
                    Diagnostic(
                        .error, "launch.no-matching-app-type",
                        "supportedAppTypes \(types.map(\.rawValue)) has no platform \(appID) is installed for on this device",
                        fix: "include \"WEB\" in supportedAppTypes")
                ])
        }
        if let running = runningApp, running.app.appID == appID, running.appType == appType {
            // Launching the app that runs joins it: same session, same transport.
            note("LAUNCH of the running \(appID): the session continues", sender: connection.sender)
            return reply(receiverStatusMessage(requestID: requestID), on: connection, namespace: .receiver)
        }
        if runningApp != nil { stopRunningApp(reason: "replaced by a LAUNCH of \(appID)") }
        runningApp = RunningApp(
            app: app, sessionID: random.uuid(), appType: appType, supportedAppTypes: request.supportedAppTypes,
            credentialsData: request.credentialsData, language: request.language, appParams: request.appParams)
        var launchNote = "launched \(app.displayName) (\(appID)) as \(appType.rawValue)"
        if let credentials = request.credentialsData {
            launchNote += "; credentialsData of type \(credentials.credentialsType?.rawValue ?? "unset") recorded"
        }
        note(launchNote, sender: connection.sender)
        announceReceiverStatus(answering: requestID, on: connection)
    }

    mutating func handleStop(_ request: ReceiverStopRequest, requestID: Int, from connection: VirtualConnection) {
        if let sessionID = request.sessionID {
            guard sessionID == runningApp?.sessionID else {
                return reply(
                    ["type": "INVALID_REQUEST", "requestId": JSONValue(requestID), "reason": "INVALID_SESSION_ID"],
                    on: connection, namespace: .receiver)
            }
        }
        // No sessionId (go-chromecast) stops whatever runs.
        if runningApp != nil { stopRunningApp(reason: "STOP") }
        announceReceiverStatus(answering: requestID, on: connection)
    }

    /// Ends the running app: its media session is cancelled and its connections closed.
    mutating func stopRunningApp(reason: String) {
        guard let app = runningApp else { return }
        endMediaSession(idleReason: .cancelled)
        let appConnections = connections.filter { $0.localID == app.transportID }.sorted()
        for connection in appConnections {
            connections.remove(connection)
            outputs.append(
                .closeVirtualConnection(
                    sender: connection.sender, localID: connection.localID, remoteID: connection.remoteID))
        }
        note("stopped \(app.app.displayName) (\(reason))")
        runningApp = nil
    }

    mutating func handleDeviceVolume(
        _ request: ReceiverSetVolumeRequest, requestID: Int, from connection: VirtualConnection
    ) {
        // go-chromecast leaves out `level` when it is 0 (Go omitempty) but always sends
        // `muted`; either key alone is a valid request.
        let requested = request.volume
        guard requested.level != nil || requested.muted != nil else {
            return reply(
                ["type": "INVALID_REQUEST", "requestId": JSONValue(requestID), "reason": "INVALID_PARAMS"],
                on: connection, namespace: .receiver)
        }
        if let level = requested.level, level.isFinite {
            volume.level = min(1, max(0, level))
        }
        if let muted = requested.muted { volume.muted = muted }
        announceReceiverStatus(answering: requestID, on: connection)
    }

    mutating func handleAppAvailability(
        _ request: AppAvailabilityRequest, requestID: Int, from connection: VirtualConnection
    ) {
        var availability: [String: JSONValue] = [:]
        for id in request.appIDs.prefix(100) {
            let installed = configuration.installedApps.contains { $0.appID == id }
            availability[id] = installed ? "APP_AVAILABLE" : "APP_UNAVAILABLE"
        }
        // The answer has `responseType` and no `type`, as devices send it.
        reply(
            [
                "requestId": JSONValue(requestID), "responseType": "GET_APP_AVAILABILITY",
                "availability": .object(availability),
            ],
            on: connection, namespace: .receiver)
    }
}
