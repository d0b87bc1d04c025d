/// What the agent prints for the shell to evaluate (`eval $(keyhaven-ssh-agent -s)`), in
/// OpenSSH's exact words, which scripts parse.
enum ShellLines {
    static func started(socket: String, pid: Int32, syntax: AgentOptions.Syntax) -> String {
        switch syntax {
        case .bourne:
            return "SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;\nSSH_AGENT_PID=\(pid); export SSH_AGENT_PID;\necho Agent pid \(pid);\n"
        case .cShell:
            return "setenv SSH_AUTH_SOCK \(socket);\nsetenv SSH_AGENT_PID \(pid);\necho Agent pid \(pid);\n"
        }
    }

    static func killed(pid: Int32, syntax: AgentOptions.Syntax) -> String {
        switch syntax {
        case .bourne: return "unset SSH_AUTH_SOCK;\nunset SSH_AGENT_PID;\necho Agent pid \(pid) killed;\n"
        case .cShell: return "unsetenv SSH_AUTH_SOCK;\nunsetenv SSH_AGENT_PID;\necho Agent pid \(pid) killed;\n"
        }
    }
}
