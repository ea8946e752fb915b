# ConnectX-6 Dx (mlx5_core / mlx5_ib), RoCE v2 (Ethernet port), firmware 22.36.1010
# source: https://github.com/magnate3/linux-riscv-dev/blob/a518471825322fa5cb85895f4539b80527ba834a/exercises2/soft-roce/rdma-ping/README.md#L411-L545
#   — `ibv_devinfo -d rocep61s0f1 -v` (vendor_part_id 4125, board MT_0000000359); `mstconfig -d 3d:00.1 q`
#     in the same file (L613-L621) names the card MCX623106AN-CDA_Ax, "ConnectX-6 Dx EN adapter card;
#     100GbE; Dual-port QSFP56". GIDs are listed as "RoCE v2". Every number below is copied from
#     that output unless a line says otherwise. (The same notes install MLNX_OFED 5.8.)
# source (rc, ud): rdma-core providers/mlx5/verbs.c, _sq_overhead() sizes IBV_QPT_RC and IBV_QPT_UD.
# source (counters): Linux drivers/infiniband/hw/mlx5/counters.c,
#   hw_stats_ops.alloc_hw_port_stats = mlx5_ib_alloc_hw_port_stats.
# max_inline: NOT SET (the device beneath keeps its own). As for cx5.profile: rdma-core
#   providers/mlx5/verbs.c derives it from the firmware's max_sq_desc_sz (max_wqe_sz_sq);
#   no constant exists and no published value for this card was found.
name = ConnectX-6 Dx
transport = roce
link_layer = ethernet
rc = yes
ud = yes
vendor_id = 0x02c9
vendor_part_id = 4125
hw_ver = 0x0
fw_ver = 22.36.1010
max_mr_size = 0xffffffffffffffff
max_qp = 131072           # half of the ConnectX-5's 262144
max_qp_wr = 32768
max_sge = 30
max_sge_rd = 30
max_cq = 16777216
max_cqe = 4194303
max_mr = 16777216
max_pd = 8388608
max_qp_rd_atom = 16
max_qp_init_rd_atom = 16
max_res_rd_atom = 2097152
atomic_cap = hca          # ATOMIC_HCA (1)
max_srq = 8388608
max_srq_wr = 32767
max_srq_sge = 31
max_ah = 2147483647
max_mcast_grp = 2097152
active_mtu = 1024         # as captured; on RoCE it follows the netdev MTU
max_mtu = 4096
gid_tbl_len = 255
max_msg_sz = 0x40000000
counters = yes
