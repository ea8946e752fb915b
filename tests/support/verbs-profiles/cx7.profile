# ConnectX-7 (mlx5_core / mlx5_ib), RoCE (Ethernet port), firmware 28.39.1002
# source: https://github.com/deepseek-ai/DeepEP/issues/137 — plain `ibv_devinfo` (no -v), posted by
#   cscyuge: mlx5_bond_0, vendor_id 0x02c9, vendor_part_id 4129, hw_ver 0x0, board MT_0000000834,
#   fw 28.39.1002, port PORT_ACTIVE, max_mtu 4096, active_mtu 4096, link_layer Ethernet.
# source (rc, ud): rdma-core providers/mlx5/verbs.c, _sq_overhead() sizes IBV_QPT_RC and IBV_QPT_UD.
# source (counters): Linux drivers/infiniband/hw/mlx5/counters.c,
#   hw_stats_ops.alloc_hw_port_stats = mlx5_ib_alloc_hw_port_stats.
# NOT SET — no complete public `ibv_devinfo -v` of a ConnectX-7 could be found; the device beneath
#   keeps its own for:
#     max_mr_size max_qp max_qp_wr max_sge max_sge_rd max_cq max_cqe max_mr max_pd
#     max_qp_rd_atom max_qp_init_rd_atom max_res_rd_atom atomic_cap max_srq max_srq_wr
#     max_srq_sge max_ah max_mcast_grp gid_tbl_len max_msg_sz
#   (https://github.com/openucx/ucx/issues/10317 posts `ibv_devinfo -v` of a ConnectX-7, fw 28.39.2048,
#   but only its header lines could be read here, so nothing is taken from it. Do not fill these
#   in from the ConnectX-6 Dx profile: firmware limits differ between generations.)
# max_inline: NOT SET — as for cx5.profile, rdma-core providers/mlx5/verbs.c derives it from the
#   firmware's max_sq_desc_sz (max_wqe_sz_sq); there is no constant.
name = ConnectX-7
transport = roce
link_layer = ethernet
rc = yes
ud = yes
vendor_id = 0x02c9
vendor_part_id = 4129
hw_ver = 0x0
fw_ver = 28.39.1002
active_mtu = 4096         # as captured; on RoCE it follows the netdev MTU
max_mtu = 4096
counters = yes
