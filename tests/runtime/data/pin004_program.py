"""PIN004's runtime agreement program: each `flagged` function reads a non_blocking
device-to-host copy's destination on the host before any synchronisation; each `ok` twin
synchronises first, in every form both checkers know. Run by tests/runtime/test_pin004_agreement.py
statically and under simulated CUDA (each function ends with its read: on fake tensors a value read
raises after the watch has seen it)."""

import torch


def flagged_tolist(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return cpu.tolist()  # flagged


def ok_device_synchronize(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    return cpu.tolist()


def flagged_item_of_view(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return cpu[0].item()  # flagged


def ok_current_stream_synchronize(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return cpu[0].item()


def flagged_print(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    print(cpu)  # flagged


def ok_event_synchronize(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    print(cpu)


def flagged_comparison(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    if cpu[0] > 0:  # flagged
        return 1
    return 0


def ok_stream_synchronize(gpu):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        cpu = gpu.to("cpu", non_blocking=True)
    stream.synchronize()
    if cpu[0] > 0:
        return 1
    return 0


def flagged_truth_test(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    if cpu[0]:  # flagged
        return 1
    return 0


def ok_accelerator_synchronize(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    torch.accelerator.synchronize()
    if cpu[0]:
        return 1
    return 0


def flagged_int(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return int(cpu[0]) + 1  # flagged


def ok_blocking_copy(gpu, other):
    cpu = gpu.to("cpu", non_blocking=True)
    again = other.to("cpu")  # a blocking copy waits for the stream
    return int(cpu[0]) + 1, again


def flagged_copy_into_pinned(gpu):
    host = torch.empty(4, pin_memory=True)
    host.copy_(gpu, non_blocking=True)
    return max(host[:2])  # flagged


def ok_copy_into_pageable(gpu):
    host = torch.empty(4)  # pageable: CUDA returns from the copy only once it is done
    host.copy_(gpu, non_blocking=True)
    return max(host[:2])


def flagged_to_host_tensor(gpu):
    host = torch.empty(4, pin_memory=True)
    cpu = gpu.to(host, non_blocking=True)
    return sorted(cpu)  # flagged


def ok_event_query(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        pass
    return sorted(cpu)


def flagged_loop_carried(gpus):
    previous = None
    for gpu in gpus:
        if previous is not None:
            print(previous)  # flagged
        previous = gpu.to("cpu", non_blocking=True)


def ok_loop_synchronized(gpus):
    previous = None
    for gpu in gpus:
        if previous is not None:
            torch.cuda.synchronize()
            print(previous)
        previous = gpu.to("cpu", non_blocking=True)


def flagged_sum(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return sum(cpu)  # flagged


def ok_blocking_to(gpu):
    cpu = gpu.to("cpu")  # blocking: nothing pending
    return sum(cpu)


def flagged_host_computation(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    total = cpu.sum()  # flagged
    torch.cuda.synchronize()
    return total.item()


def ok_host_computation(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    total = cpu.sum()
    return total.item()


def flagged_comparison_kept(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    mask = cpu > 0  # flagged
    return mask


def flagged_reflected_comparison(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    mask = 0 < cpu  # flagged
    return mask


def flagged_arithmetic(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return cpu * 2  # flagged


def flagged_combined(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return torch.cat([torch.ones(2), cpu])  # flagged


def ok_combined(gpu, other):
    cpu = gpu.to("cpu", non_blocking=True)
    host = other.to("cpu")  # blocking: waits for the stream, the copy above included
    return torch.cat([host, cpu])
