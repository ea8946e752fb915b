# ConnectX-5 (mlx5_core / mlx5_ib), RoCE (Ethernet port), firmware 16.27.1016, MLNX_OFED 4.x
# source: https://github.com/magnate3/linux-riscv-dev/blob/a518471825322fa5cb85895f4539b80527ba834a/exercises2/soft-roce/mellanox/bond.md#L365-L540
#   — `ibv_devinfo -v` of mlx5_2, which `ibdev2netdev -v` in the same file (L184) names
#     "MT4119 - MCX515A-CCAT, CX515A - ConnectX-5 QSFP28 fw 16.27.1016"; port link_layer Ethernet.
#     Every number below is copied from that output unless a line says otherwise.
# cross-check: https://github.com/open-mpi/ompi/pull/6137 — `ibv_devinfo -v` of another ConnectX-5
#   (4119, fw 16.23.1020): the same max_qp .. atomic_cap values.
# source (rc, ud): rdma-core providers/mlx5/verbs.c, _sq_overhead() sizes IBV_QPT_RC and IBV_QPT_UD
#   send queues (both QP types are created by the provider).
# source (counters): Linux drivers/infiniband/hw/mlx5/counters.c,
#   hw_stats_ops.alloc_hw_port_stats = mlx5_ib_alloc_hw_port_stats (ports/1/hw_counters).
# max_inline: NOT SET (the device beneath keeps its own). rdma-core providers/mlx5/verbs.c
#   (mlx5_calc_send_wqe, mlx5_calc_sq_size) computes it as max_sq_desc_sz - sq_overhead(qp)
#   - sizeof(struct mlx5_wqe_inl_data_seg); max_sq_desc_sz is the firmware's max_wqe_sz_sq
#   handed over at context creation (providers/mlx5/mlx5.c: context->max_sq_desc_sz =
#   resp->max_sq_desc_sz). There is no constant, and no published value for this card was found.
name = ConnectX-5
transport = roce          # ibv_devinfo prints "InfiniBand (0)" for RoCE; the port is Ethernet
link_layer = ethernet
rc = yes
ud = yes
vendor_id = 0x02c9
vendor_part_id = 4119
hw_ver = 0x0
fw_ver = 16.27.1016
max_mr_size = 0xffffffffffffffff
max_qp = 262144
max_qp_wr = 32768
max_sge = 30
max_sge_rd = 30
max_cq = 16777216
max_cqe = 4194303
max_mr = 16777216
max_pd = 16777216         # MLNX_OFED 4.x; the ConnectX-6 Dx posting (OFED 5.8) prints 8388608
max_qp_rd_atom = 16
max_qp_init_rd_atom = 16
max_res_rd_atom = 4194304
atomic_cap = hca          # ATOMIC_HCA (1)
max_srq = 8388608
max_srq_wr = 32767
max_srq_sge = 31
max_ah = 2147483647
max_mcast_grp = 2097152
active_mtu = 1024         # as captured; on RoCE it follows the netdev MTU
max_mtu = 4096
gid_tbl_len = 256
max_msg_sz = 0x40000000
counters = yes
