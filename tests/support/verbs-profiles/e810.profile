# Intel E810 (ice + irdma), RoCEv2 mode (irdma loaded with roce_ena=1), firmware 1.54
# source: https://github.com/magnate3/linux-riscv-dev/blob/a518471825322fa5cb85895f4539b80527ba834a/exercises2/soft-roce/rdma-ping/README.md#L19-L112
#   — `ibv_devinfo -d irdma1 -v` (vendor 0x8086, part 5522, hw_ver 0x2): transport "InfiniBand (0)",
#     link_layer Ethernet, GIDs "RoCE v2"; the same notes load irdma with roce_ena=1 (L246).
#     Every number below is copied from that output unless a line says otherwise.
# other posting, NOT used: https://github.com/deepseek-ai/3FS/issues/192 — `ibv_devinfo -v` of an
#   E810 (irdma0, fw 1.74) with much smaller limits: max_qp 4092, max_qp_wr 8127, max_sge 6,
#   max_cq 8189, max_mr 4194301, max_qp_rd_atom 8, max_qp_init_rd_atom 8, max_mcast_grp 4096.
#   E810 limits depend on the irdma driver/firmware/resource profile; pick the posting that fits.
# source (max_inline): rdma-core providers/irdma/user.h, IRDMA_MAX_INLINE_DATA_SIZE = 101; the kernel
#   sets dev->hw_attrs.uk_attrs.max_hw_inline = IRDMA_MAX_INLINE_DATA_SIZE, userspace takes it from
#   resp.max_hw_inline (providers/irdma/umain.c) and irdma_ucreate_qp (providers/irdma/uverbs.c)
#   rejects max_inline_data > max_hw_inline. Same file: IRDMA_MAX_WQ_FRAGMENT_COUNT = 13,
#   IRDMA_MAX_SGE_RD = 13, IRDMA_MAX_OUTBOUND_MSG_SIZE = 2147483647 — matching max_sge,
#   max_sge_rd and max_msg_sz below.
# source (rc, ud): rdma-core providers/irdma/uverbs.c, irdma_ucreate_qp accepts only IBV_QPT_RC
#   and IBV_QPT_UD.
# source (counters): Linux drivers/infiniband/hw/irdma/verbs.c,
#   irdma_dev_ops.alloc_hw_port_stats = irdma_alloc_hw_port_stats.
# max_srq_wr, max_srq_sge: NOT SET — ibv_devinfo does not print them when max_srq is 0 (no SRQ
#   in the posting; rdma-core installs the irdma SRQ verbs only when the kernel reports IRDMA_FEATURE_SRQ).
name = Intel E810 (irdma, RoCEv2)
transport = roce
link_layer = ethernet
rc = yes
ud = yes
vendor_id = 0x8086
vendor_part_id = 5522
hw_ver = 0x2
fw_ver = 1.54
max_mr_size = 0x200000000000
max_qp = 65533
max_qp_wr = 4063
max_sge = 13
max_sge_rd = 13
max_cq = 131069
max_cqe = 1048574
max_mr = 2097150
max_pd = 262141
max_qp_rd_atom = 127      # not equal to max_qp_init_rd_atom, as published
max_qp_init_rd_atom = 255
max_res_rd_atom = 0
atomic_cap = none         # ATOMIC_NONE (0)
max_srq = 0
max_ah = 131072
max_mcast_grp = 65536
max_inline = 101
active_mtu = 1024         # as captured; on RoCE it follows the netdev MTU
max_mtu = 4096
gid_tbl_len = 32
max_msg_sz = 0x7fffffff
counters = yes
