import Glibc

/// The clock a take's names and aligned splits are read on: the machine's local time (the
/// default, as `TZ` and `/etc/localtime` say) or UTC (`--utc`).
///
/// Local names jump at daylight-saving changes: in spring an hour of names is skipped (no
/// `01:xx` on the last Sunday of March in London), in autumn an hour of names comes twice
/// (`01:xx` in summer time, then again in winter time). UTC names and UTC-aligned splits never
/// do, which is what an unattended log wants.
///
/// What the zone decides: a name template's fields (and an automatic name's time stamp), where
/// `--align` counts its multiples from (local or UTC midnight), and how ``SegmentRetention``
/// reads names back into times. What it does not: a Broadcast Wave `bext` chunk keeps the local
/// origination date, time and time reference (samples since local midnight) that DAWs expect,
/// and a sidecar's wall-clock time stays ISO 8601 with the local offset, which is unambiguous
/// either way.
public enum TakeTimeZone: String, Sendable, Equatable {
    /// The machine's local time, daylight saving and all.
    case local
    /// Coordinated Universal Time, which never jumps.
    case utc

    /// The calendar fields of `time` in this zone.
    func parts(of time: time_t) -> tm {
        var seconds = time
        var parts = tm()
        switch self {
        case .local: localtime_r(&seconds, &parts)
        case .utc: gmtime_r(&seconds, &parts)
        }
        return parts
    }

    /// The time the calendar fields `parts` name in this zone (a local time in a daylight-saving
    /// change is taken as mktime(3) takes it); nil when it cannot be represented.
    func time(of parts: tm) -> time_t? {
        var fields = parts
        let time: time_t
        switch self {
        case .local:
            fields.tm_isdst = -1
            time = mktime(&fields)
        case .utc:
            time = timegm(&fields)
        }
        return time == -1 ? nil : time
    }

    /// Midnight of the day that holds `time`, in this zone.
    func midnight(before time: time_t) -> time_t {
        var fields = parts(of: time)
        fields.tm_hour = 0
        fields.tm_min = 0
        fields.tm_sec = 0
        return self.time(of: fields) ?? time
    }
}
