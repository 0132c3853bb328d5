// This process's peak resident set in MB. On Linux it is read from /proc/self/status (VmHWM: the
// peak of this program's own memory), because getrusage's maxRSS survives exec: a process that
// a bench spawns reports the bench's own resident set at the fork when that was larger (a fresh
// search "peaked" at 404 MB when spawned from a parent holding 442 MB, at 100 MB from one holding
// 41 MB). Elsewhere, maxRSS.
const { readFileSync } = require("node:fs")

exports.peakRssMb = () => {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))
    if (hwm !== null) return Math.round(Number(hwm[1]) / 1024)
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024)
}
