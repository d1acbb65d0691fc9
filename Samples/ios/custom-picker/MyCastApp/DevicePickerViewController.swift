import GoogleCast
import UIKit

/// The app's own list of Cast devices instead of the SDK's cast button.
final class DevicePickerViewController: UITableViewController, GCKDiscoveryManagerListener {
    private let discoveryManager = GCKCastContext.sharedInstance().discoveryManager

    override func viewDidLoad() {
        super.viewDidLoad()
        let criteria = GCKDiscoveryCriteria(applicationID: kGCKDefaultMediaReceiverApplicationID)
        _ = criteria
        discoveryManager.add(self)
    }

    override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
        Int(discoveryManager.deviceCount)
    }

    func didUpdateDeviceList() {
        tableView.reloadData()
    }
}
