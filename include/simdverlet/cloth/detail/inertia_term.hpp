// The inertia of a material cloth as a term of the implicit solve (newton_solve.hpp): implicit
// Euler is the minimum over x of m / (2 h^2) |x - y|^2 + E(x), y the inertial prediction (where
// each particle would be with no internal force), so this term is what makes a step a step.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace simdverlet::detail
{

class InertiaTerm
{
  public:
    std::vector<double> mass;             ///< kg, per particle of the cloth
    std::vector<Eigen::Vector3d> predict; ///< y, per particle
    double inv_h2 = 0.0;                  ///< 1 / h^2

    double value(const std::vector<Eigen::Vector3d>& x) const
    {
        double energy = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i)
            energy += 0.5 * mass[i] * inv_h2 * (x[i] - predict[i]).squaredNorm();
        return energy;
    }

    void add_gradient(const std::vector<Eigen::Vector3d>& x, std::vector<Eigen::Vector3d>& g) const
    {
        for (std::size_t i = 0; i < x.size(); ++i)
            g[i] += (mass[i] * inv_h2) * (x[i] - predict[i]);
    }

    void add_product(const std::vector<Eigen::Vector3d>& v, std::vector<Eigen::Vector3d>& out) const
    {
        for (std::size_t i = 0; i < v.size(); ++i)
            out[i] += (mass[i] * inv_h2) * v[i];
    }

    void add_diagonal(std::vector<Eigen::Matrix3d>& blocks) const
    {
        for (std::size_t i = 0; i < blocks.size(); ++i)
            blocks[i].diagonal().array() += mass[i] * inv_h2;
    }
};

} // namespace simdverlet::detail
