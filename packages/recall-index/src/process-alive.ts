/** Whether process `pid` exists on this machine: signal 0 (EPERM: alive, another user's). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
  }
}
