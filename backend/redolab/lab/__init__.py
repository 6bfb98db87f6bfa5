"""Level 5: the WAN lab: namespaced hosts with their own sshd, a userspace delay line (delayline.c),
rate, loss and MTU; register adds them as an environment. Imports levels 0-2."""
