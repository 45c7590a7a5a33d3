// scripts/corpus's Qt Quick 3D scene: lit, shadowed PBR models turning over a floor, drawn
// by Qt Quick 3D's renderer (depth prepass, shadow maps, multisampling) through Qt's
// Vulkan back end (QSG_RHI_BACKEND=vulkan).
import QtQuick
import QtQuick3D

Window {
    width: 480; height: 360; visible: true; color: "black"
    View3D {
        anchors.fill: parent
        environment: SceneEnvironment {
            clearColor: "#203040"
            backgroundMode: SceneEnvironment.Color
            antialiasingMode: SceneEnvironment.MSAA
            antialiasingQuality: SceneEnvironment.High
        }
        PerspectiveCamera { position: Qt.vector3d(0, 200, 500); eulerRotation.x: -20 }
        DirectionalLight {
            eulerRotation.x: -45; eulerRotation.y: 30
            castsShadow: true; shadowMapQuality: Light.ShadowMapQualityHigh
        }
        PointLight { position: Qt.vector3d(-200, 150, 100); color: "#ffd0a0"; brightness: 2 }
        Model {
            source: "#Rectangle"; y: -100; scale: Qt.vector3d(10, 10, 1); eulerRotation.x: -90
            materials: PrincipledMaterial { baseColor: "#808890"; roughness: 0.6 }
        }
        Node {
            NumberAnimation on eulerRotation.y { from: 0; to: 360; duration: 4000; loops: Animation.Infinite }
            Model {
                source: "#Sphere"; x: -150
                materials: PrincipledMaterial { baseColor: "#c04030"; metalness: 0.8; roughness: 0.3 }
            }
            Model {
                source: "#Cube"; eulerRotation: Qt.vector3d(30, 45, 0)
                materials: PrincipledMaterial { baseColor: "#30a050"; roughness: 0.5 }
            }
            Model {
                source: "#Cylinder"; x: 150
                materials: DefaultMaterial { diffuseColor: "#3060c0"; specularAmount: 0.5 }
            }
            Model {
                source: "#Cone"; z: 150; opacity: 0.6
                materials: PrincipledMaterial { baseColor: "#e0d040"; alphaMode: PrincipledMaterial.Blend }
            }
        }
    }
}
