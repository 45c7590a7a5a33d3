// scripts/corpus's Qt Quick scene: rotating rounded rectangles, text and particles, drawn by
// Qt's scene graph through its Vulkan back end (QSG_RHI_BACKEND=vulkan).
import QtQuick
import QtQuick.Particles

Window {
    width: 320; height: 240; visible: true; color: "#203040"
    Repeater {
        model: 12
        Rectangle {
            x: 20 + (index % 4) * 70; y: 20 + Math.floor(index / 4) * 60
            width: 50; height: 40; radius: 8
            color: Qt.hsla(index / 12, 0.7, 0.5, 0.8)
            RotationAnimation on rotation { from: 0; to: 360; duration: 1000 + index * 100; loops: Animation.Infinite }
        }
    }
    Text { anchors.bottom: parent.bottom; text: "macroscope"; color: "white"; font.pixelSize: 24 }
    ParticleSystem { id: sys }
    Emitter { system: sys; anchors.centerIn: parent; emitRate: 200; lifeSpan: 800; size: 8
              velocity: AngleDirection { angleVariation: 360; magnitude: 80 } }
    ItemParticle { system: sys; delegate: Rectangle { width: 4; height: 4; color: "yellow" } }
}
