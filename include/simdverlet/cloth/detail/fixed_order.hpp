// Products of small matrices summed in one written order. Eigen's own products fuse each
// multiply-add into one rounding where the target has FMA, and split a sum by the packet's width,
// so the same step would round differently in the sse2, avx2 and avx512 builds of one program,
// which the Python package ships side by side and promises the same bits from. Element-wise
// arithmetic, dot products of 3-vectors and norms round alike on every build; products of
// matrices go through here.
#pragma once

#include <Eigen/Core>

namespace simdverlet::detail
{

/// a b, each entry summed over k in order.
template <int R, int K, int C>
Eigen::Matrix<double, R, C> times(const Eigen::Matrix<double, R, K>& a, const Eigen::Matrix<double, K, C>& b)
{
    Eigen::Matrix<double, R, C> out;
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j)
        {
            double sum = a(i, 0) * b(0, j);
            for (int k = 1; k < K; ++k)
                sum += a(i, k) * b(k, j);
            out(i, j) = sum;
        }
    return out;
}

/// U S U^T.
inline Eigen::Matrix3d sandwich(const Eigen::Matrix3d& U, const Eigen::Matrix3d& S)
{
    return times(times(U, S), Eigen::Matrix3d(U.transpose()));
}

} // namespace simdverlet::detail
